"""The Room event feed over a websocket, for members (session) and agents (bearer token)."""

import json
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from osfoundry.auth import READ, authenticate_bearer, bearer_from_header
from osfoundry.dbthreads import run_sync
from osfoundry.errors import DomainError
from osfoundry.groups import PersonSocket, person_group

from .. import access, events
from ..models import Proposal, Room

FRAME_HELP = (
    'Send a JSON text frame such as {"after_sequence": 0} to resume after a sequence; '
    "the feed sends events on its own"
)
PERSON_HELP = (
    'Send a JSON text frame such as {"room_id": "…", "after_sequence": 0} to resume one of your '
    "Rooms after a sequence; the feed sends events on its own"
)


class RoomEventsConsumer(AsyncJsonWebsocketConsumer):
    """Sends Room events as JSON in sequence order; `?after_sequence=N` resumes after N.

    A live event is only a signal: the consumer re-reads from its last sent sequence, so a gap
    (a missed group message, events during the backlog) fills itself in order, and members get
    the same redacted view as the REST API.
    """

    async def connect(self):
        self.room_id = str(self.scope["url_route"]["kwargs"]["room_id"])
        self.user, self.is_agent = await self.authenticate()
        if self.user is None:
            await self.close(code=4401)
            return
        try:
            await run_sync(access.get_room_for_user, self.user, self.room_id, agent=self.is_agent)
        except DomainError:
            await self.close(code=4404)
            return
        self.last_sent = self.after_sequence_from_query()
        await self.channel_layer.group_add(events.room_group(self.room_id), self.channel_name)
        await self.accept()
        await self.send_new_events()

    async def authenticate(self):
        headers = dict(self.scope.get("headers") or [])
        raw = bearer_from_header(headers.get(b"authorization", b"").decode("latin-1"))
        if raw:
            principal = await run_sync(authenticate_bearer, raw)
            if principal is None or READ not in principal.scopes:
                return None, True
            return principal.user, True
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            return user, False
        return None, False

    def after_sequence_from_query(self) -> int:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            return max(int(query.get("after_sequence", ["0"])[0]), 0)
        except ValueError:
            return 0

    async def disconnect(self, code):
        if getattr(self, "last_sent", None) is not None:
            await self.channel_layer.group_discard(
                events.room_group(self.room_id), self.channel_name
            )

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        # The feed is one-way; a client may ask to resume after a sequence. Anything else gets
        # an error frame and the feed goes on (a bad frame must not cost the client its feed).
        try:
            content = json.loads(text_data) if text_data is not None else None
        except (ValueError, RecursionError):
            content = None
        after = content.get("after_sequence") if isinstance(content, dict) else None
        if not isinstance(after, int) or isinstance(after, bool):
            await self.send_json({"error": {"code": "invalid_frame", "message": FRAME_HELP}})
            return
        self.last_sent = max(after, 0)
        await self.send_new_events()

    async def room_event(self, message):
        if message["event"]["sequence"] > self.last_sent:
            await self.send_new_events()

    async def send_new_events(self):
        while True:
            page = await run_sync(
                events.room_events_after,
                self.user,
                self.room_id,
                after_sequence=self.last_sent,
                limit=50,
            )
            for event in page["events"]:
                await self.send_json(event)
                self.last_sent = event["sequence"]
            if len(page["events"]) < 50:
                return


def rooms_of(user) -> tuple[dict[str, int], set[str]]:
    """Every Room the person sees, with its current sequence, and the ones they own."""
    rooms = Room.objects.visible_to(user).values_list("pk", "last_event_sequence", "owner_id")
    cursors = {str(pk): sequence for pk, sequence, _owner in rooms}
    return cursors, {str(pk) for pk, _sequence, owner in rooms if owner == user.pk}


def room_names(room_ids: list[str]) -> dict[str, str]:
    return {
        str(pk): name for pk, name in Room.objects.filter(pk__in=room_ids).values_list("pk", "name")
    }


def pending_count(user) -> int:
    return Proposal.objects.pending().for_owner(user).count()


class PersonEventsConsumer(PersonSocket, AsyncJsonWebsocketConsumer):
    """One socket per browser tab: the events of every Room the signed-in person sees.

    Each Room keeps its own cursor, live from the moment of connecting; a page resumes a Room
    from the sequence it rendered with a frame {"room_id": …, "after_sequence": N}. After each
    proposal event in an owned Room the feed sends {"type": "pending.count", "count": N}, the
    server's own count, so titles and badges never drift from deltas applied twice.
    """

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user = user
        await self.channel_layer.group_add(person_group(user.pk), self.channel_name)
        self.cursors, self.owned = await run_sync(rooms_of, user)
        for room_id in self.cursors:
            await self.channel_layer.group_add(events.room_group(room_id), self.channel_name)
        await self.accept()
        await self.send_json({"type": "feed.rooms", "owned": sorted(self.owned)})
        await self.send_pending_count()

    async def disconnect(self, code):
        if hasattr(self, "user"):
            await self.channel_layer.group_discard(person_group(self.user.pk), self.channel_name)
        for room_id in getattr(self, "cursors", {}):
            await self.channel_layer.group_discard(events.room_group(room_id), self.channel_name)

    async def rooms_changed(self, message):
        """The person gained a Room (rooms/live/membership_feed.py): follow it live from now, and
        name it in a feed.rooms frame, so a page can resume it from any sequence (the inbox from
        0)."""
        cursors, owned = await run_sync(rooms_of, self.user)
        joined = [room_id for room_id in cursors if room_id not in self.cursors]
        for room_id in joined:
            self.cursors[room_id] = cursors[room_id]
            await self.channel_layer.group_add(events.room_group(room_id), self.channel_name)
        gained = joined + sorted(owned - self.owned - set(joined))
        self.owned = owned
        if not gained:
            return
        names = await run_sync(room_names, gained)
        await self.send_json(
            {
                "type": "feed.rooms",
                "owned": sorted(self.owned),
                "joined": [{"room_id": pk, "name": names.get(pk, "")} for pk in gained],
            }
        )

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        try:
            content = json.loads(text_data) if text_data is not None else None
        except (ValueError, RecursionError):
            content = None
        room_id = content.get("room_id") if isinstance(content, dict) else None
        after = content.get("after_sequence") if isinstance(content, dict) else None
        if not isinstance(room_id, str) or room_id not in self.cursors:
            after = None
        if not isinstance(room_id, str) or not isinstance(after, int) or isinstance(after, bool):
            await self.send_json({"error": {"code": "invalid_frame", "message": PERSON_HELP}})
            return
        self.cursors[room_id] = max(after, 0)
        await self.send_new_events(room_id)

    async def room_event(self, message):
        room_id = str(message["event"]["room_id"])
        if room_id in self.cursors and message["event"]["sequence"] > self.cursors[room_id]:
            await self.send_new_events(room_id)

    async def send_new_events(self, room_id: str):
        counts = False
        while True:
            try:
                page = await run_sync(
                    events.room_events_after,
                    self.user,
                    room_id,
                    after_sequence=self.cursors[room_id],
                    limit=50,
                )
            except DomainError:
                return  # No longer in the Room: its events stop here.
            for event in page["events"]:
                await self.send_json(event)
                self.cursors[room_id] = event["sequence"]
                counts = counts or event["type"].startswith("proposal.")
            if len(page["events"]) < 50:
                break
        if counts and room_id in self.owned:
            await self.send_pending_count()

    async def send_pending_count(self):
        count = await run_sync(pending_count, self.user)
        await self.send_json({"type": "pending.count", "count": count})
