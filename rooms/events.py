"""Room events: built here, appended in the caller's transaction, published after commit, and
read back in pages (poll_resource_events, the REST route, the websocket feed).

The event row is written inside the same transaction as the state change it describes, so an
event exists exactly when its change does. Publishing (websocket groups, long-poll wake-ups) waits
for commit: nobody is told about a change that could still roll back.
"""

import logging

from django.db import transaction

from osfoundry import wakeups
from osfoundry.auth import AnyUser
from osfoundry.groups import group_send
from osfoundry.schemas import MAX_PAGE

from .access import get_room_for_user
from .models import Room, RoomEvent

logger = logging.getLogger(__name__)

PROPOSAL_CREATED = "proposal.created"
PROPOSAL_APPROVED = "proposal.approved"
PROPOSAL_DECLINED = "proposal.declined"
PROPOSAL_CHANGES_REQUESTED = "proposal.changes_requested"
PROPOSAL_REVISED = "proposal.revised"
PROPOSAL_WITHDRAWN = "proposal.withdrawn"
APP_CREATED = "app.created"
APP_UPDATED = "app.updated"
APP_ROLLED_BACK = "app.rolled_back"
APP_REMOVED = "app.removed"
APP_RESTORED = "app.restored"
APP_MOVED = "app.moved"
APP_RENAMED = "app.renamed"


def room_group(room_id) -> str:
    return f"room-events.{room_id}"


def append_room_event(*, room: Room, type: str, payload: dict) -> RoomEvent:
    """Call inside a transaction that holds the lock on `room` (select_for_update)."""
    room.last_event_sequence += 1
    Room.objects.filter(pk=room.pk).update(last_event_sequence=room.last_event_sequence)
    event = RoomEvent.objects.create(
        room=room, sequence=room.last_event_sequence, type=type, payload=payload
    )
    data = event.as_dict()
    transaction.on_commit(lambda: publish_room_event(data))
    return event


def room_key(room_id) -> str:
    """The wake-up key of a Room's event feed (poll_resource_events parks on it)."""
    return f"room:{room_id}"


def proposal_key(proposal_id) -> str:
    """The wake-up key of one proposal's status: its tasks' listeners park on it
    (rooms/review/tasks.py). A proposal event announces it, and so does a revision for the one it
    took the place of."""
    return f"proposal:{proposal_id}"


def publish_room_event(data: dict) -> None:
    keys = [room_key(data["room_id"])]
    if data["type"].startswith("proposal."):
        keys += [
            proposal_key(data[field])
            for field in ("proposal_id", "previous_proposal_id")
            if data.get(field)
        ]
    wakeups.notify(keys)
    try:
        group_send(room_group(data["room_id"]), {"type": "room.event", "event": data})
    except Exception:
        # The event is stored; websocket clients catch up by resuming from their sequence.
        logger.exception("could not publish room event %s", data.get("sequence"))


def room_events_after(
    user: AnyUser, room_id, *, after_sequence: int = 0, limit: int = MAX_PAGE, agent: bool = False
) -> dict:
    """A page of the Room's events after `after_sequence`, as `user` may see them."""
    room = get_room_for_user(user, room_id, agent=agent)
    rows = list(
        RoomEvent.objects.filter(room=room, sequence__gt=after_sequence).order_by("sequence")[
            :limit
        ]
    )
    out = [event.as_dict() for event in rows]
    if not room.is_owned_by(user):
        out = [redact_for_member(event, user) for event in out]
    cursor = rows[-1].sequence if rows else max(after_sequence, 0)
    return {"events": out, "next_after_sequence": cursor}


def redact_for_member(event: dict, user: AnyUser) -> dict:
    # Members see that a proposal exists only when it is theirs; its name is pending content.
    if event["type"] == PROPOSAL_CREATED and event.get("proposed_by") != user.get_username():
        return {k: event[k] for k in ("sequence", "type", "room_id", "created_at")}
    return event
