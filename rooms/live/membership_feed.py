"""A person's open tabs follow the Rooms they gain: a Room they create or come to own, a Room
they are added to. After commit, each such person's feed sockets (rooms/live/consumers.py
PersonEventsConsumer, in every worker) hear "rooms.changed" and re-read which Rooms they see.
Signals, because the console, the admin and scripts all write these rows."""

import logging

from django.db import transaction
from django.db.models.signals import m2m_changed, post_save
from django.dispatch import receiver

from osfoundry.groups import group_send

from ..models import Room

logger = logging.getLogger(__name__)


def person_group(user_id) -> str:
    return f"person-rooms.{user_id}"


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


@receiver(post_save, sender=Room, dispatch_uid="rooms.room_saved_follow")
def room_saved(sender, instance, **kwargs) -> None:
    tell_people([instance.owner_id])


@receiver(m2m_changed, sender=Room.members.through, dispatch_uid="rooms.room_members_follow")
def room_members_added(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action == "post_add":
        tell_people([instance.pk] if reverse else pk_set)
