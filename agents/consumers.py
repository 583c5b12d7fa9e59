"""The console's live Messages over a websocket: a logged-in person's own signals
(agents/feed.py). Session only; an agent reads its messages with wait_for_messages."""

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from osfoundry.groups import PersonSocket, person_group


class MessagesConsumer(PersonSocket, AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = person_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        # One-way: the page only listens.
        await self.send_json(
            {"error": {"code": "invalid_frame", "message": "This feed is one-way"}}
        )

    async def message_signal(self, event):
        await self.send_json(event["signal"])
