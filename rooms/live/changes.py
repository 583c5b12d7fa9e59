"""The model changes that the process memories, the live feeds and the parked waits follow,
each heard by one receiver here that tells every module concerned.

A change (a Room saved, its members changed, a person saved or deleted, a project's members
changed) reaches several: what this process remembers (rooms.live.remembered_rooms,
osfoundry.trust), the parked waits whose access it may end (rooms.live.revocation,
agents.revocation) and a person's open feeds (rooms.live.membership_feed). Each of them adds its
reaction to the change with `react` (agents too: rooms never imports it), in the order the apps
load. A reaction gets the signal's arguments and returns the wake-up keys it needs sent; the
receiver sends them all in one wake-up after commit, so every memory forgets before any waiter of
that wake-up runs. Signals, because the console, the admin, allauth and scripts on the ORM all
write these rows; QuerySet.update() sends none (the memories' trust windows bound that).
"""

from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from osfoundry import wakeups

from ..models import Project, Room

Reaction = Callable[..., Iterable[str] | None]


class Change:
    """One model change: its reactions, in the order they were added."""

    def __init__(self, name: str):
        self.name = name
        self.reactions: list[Reaction] = []

    def react(self, reaction: Reaction) -> Reaction:
        self.reactions.append(reaction)
        return reaction

    def __call__(self, sender=None, **details) -> None:
        keys: list[str] = []
        for reaction in self.reactions:
            keys.extend(reaction(**details) or ())
        if keys:
            keys = list(dict.fromkeys(keys))
            transaction.on_commit(lambda: wakeups.notify(keys))


room_saved = Change("a Room saved")
room_deleted = Change("a Room deleted")
project_saved = Change("a project saved or deleted")
room_members = Change("a Room's members changed")  # m2m_changed's arguments
project_members = Change("a project's members changed")  # m2m_changed's arguments
person_saved = Change("a person saved (deactivated, too)")
person_deleted = Change("a person deleted")

_UID = "rooms.live.changes."
post_save.connect(room_saved, sender=Room, dispatch_uid=_UID + "room_saved")
post_delete.connect(room_deleted, sender=Room, dispatch_uid=_UID + "room_deleted")
post_save.connect(project_saved, sender=Project, dispatch_uid=_UID + "project_saved")
post_delete.connect(project_saved, sender=Project, dispatch_uid=_UID + "project_deleted")
m2m_changed.connect(room_members, sender=Room.members.through, dispatch_uid=_UID + "room_members")
m2m_changed.connect(
    project_members, sender=Project.members.through, dispatch_uid=_UID + "project_members"
)
post_save.connect(person_saved, sender=settings.AUTH_USER_MODEL, dispatch_uid=_UID + "person")
post_delete.connect(
    person_deleted, sender=settings.AUTH_USER_MODEL, dispatch_uid=_UID + "person_gone"
)
