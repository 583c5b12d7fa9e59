"""A person's open tabs follow the Rooms they gain: a Room they create or come to own, a Room
they are added to. After commit, each such person's feed sockets (rooms/live/consumers.py
PersonEventsConsumer, in every worker) hear "rooms.changed" and re-read which Rooms they see.
The changes are heard once, in rooms.live.changes."""

import logging

from django.db import transaction

from osfoundry.groups import group_send, person_group

from . import changes

logger = logging.getLogger(__name__)


def tell_people(user_ids) -> None:
    """Ask every open feed of these people to re-read their Rooms, once the change committed."""
    ids = sorted({pk for pk in user_ids if pk is not None})
    if ids:
        transaction.on_commit(lambda: send_rooms_changed(ids))


def send_rooms_changed(user_ids: list[int]) -> None:
    for user_id in user_ids:
        try:
            group_send(person_group(user_id), {"type": "rooms.changed"})
        except Exception:
            # The Room is stored; a tab that missed this sees the Room on its next load.
            logger.exception("could not tell person %s about a Room they gained", user_id)


@changes.room_saved.react
def owner_follows(instance, **_details) -> None:
    tell_people([instance.owner_id])


@changes.room_members.react
def members_follow(instance, action, reverse, pk_set, **_details) -> None:
    if action == "post_add":
        tell_people([instance.pk] if reverse else pk_set)
