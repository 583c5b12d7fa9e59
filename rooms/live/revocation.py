"""Access to a Room that ends ends its parked event polls at once, in every worker.

poll_resource_events parks on the Room's wake-up key (events.room_key); after every wake-up it
checks the caller's token and reads as who the caller is now (rooms/tools.py). So a member
removed from a Room, or a person deactivated, gets a wake-up without an event: the poll answers
"not found" or 401 instead of waiting out its timeout. The changes are heard once, in
rooms.live.changes, which sends these keys with the other reactions' after commit.
"""

from ..events import room_key
from ..models import Room
from . import changes


def room_keys(room_ids) -> list[str]:
    return [room_key(pk) for pk in room_ids]


@changes.room_members.react
def members_left(instance, action, reverse, pk_set, **_details) -> list[str] | None:
    if action == "post_remove":
        return room_keys(pk_set if reverse else [instance.pk])
    if action == "pre_clear":
        return room_keys(
            instance.member_rooms.values_list("pk", flat=True) if reverse else [instance.pk]
        )
    return None


@changes.person_saved.react
def person_deactivated(instance, **_details) -> list[str] | None:
    if instance.is_active:
        return None
    return room_keys(Room.objects.visible_to(instance).values_list("pk", flat=True))
