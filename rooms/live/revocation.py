"""Access to a Room that ends ends its parked event polls at once, in every worker.

poll_resource_events parks on the Room's wake-up key (events.room_key); after every wake-up it
checks the caller's token and reads as who the caller is now (rooms/tools.py). So a member
removed from a Room, or a person deactivated, gets a wake-up without an event: the poll answers
"not found" or 401 instead of waiting out its timeout. Signals, because the admin and scripts
on the ORM write these rows (see agents/revocation.py).
"""

from django.conf import settings
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save
from django.dispatch import receiver

from osfoundry import wakeups

from ..events import room_key
from ..models import Room


def wake_rooms(room_ids) -> None:
    keys = [room_key(pk) for pk in room_ids]
    if keys:
        transaction.on_commit(lambda: wakeups.notify(keys))


@receiver(m2m_changed, sender=Room.members.through, dispatch_uid="rooms.room_members")
def room_members_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action == "post_remove":
        wake_rooms(pk_set if reverse else [instance.pk])
    elif action == "pre_clear":
        wake_rooms(instance.member_rooms.values_list("pk", flat=True) if reverse else [instance.pk])


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="rooms.user_saved")
def user_saved(sender, instance, **kwargs) -> None:
    if not instance.is_active:
        wake_rooms(Room.objects.visible_to(instance).values_list("pk", flat=True))
