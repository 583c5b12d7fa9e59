"""Small builders shared by the console tests."""

from rooms.services import propose_snippet


def propose(room, agent, files, *, key="key-00001", name="Standup timer"):
    return propose_snippet(
        caller=agent, room_id=str(room.pk), name=name, files=files, idempotency_key=key
    ).proposal
