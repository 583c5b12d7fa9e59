"""What this process remembers of the Rooms agents read, so that read_room costs no database hop.

An agent reading its Room in a loop would otherwise pay a token check and an ORM query each
time (about 3 ms of CPU). The token check is remembered by osfoundry.trust; this remembers, per
Room, what read_room answers and who may read it, under osfoundry.memory's rule: every write
that changes either (the Room saved or deleted, its project saved or deleted, its members
changed, a person saved or deleted: rooms.live.changes) sends ROOMS_KEY after commit, and every
process forgets every Room before any waiter of that wake-up runs; while wake-ups may be missed,
nothing is remembered.

Only a Room a caller may read is answered from memory; everything else (not found, not yours,
a local Room) goes to rooms.access, which says so in its own words.
"""

import uuid
from dataclasses import dataclass

from osfoundry.auth import AnyUser, token_project_id
from osfoundry.memory import HeardMemory

from ..models import Room
from . import changes

ROOMS_KEY = "rooms:changed"
REMEMBER_S = 300.0


@dataclass(frozen=True, slots=True)
class KnownRoom:
    answer: dict  # Room.as_dict()
    owner_id: int
    member_ids: frozenset[int]
    project_id: uuid.UUID
    is_local: bool

    def readable_by(self, user: AnyUser) -> bool:
        """rooms.access.get_room_for_user's rule, for an agent: the owner or a member, within
        its token's project, never a local Room."""
        if not user.is_authenticated or self.is_local:
            return False
        if user.pk != self.owner_id and user.pk not in self.member_ids:
            return False
        project_id = token_project_id(user)
        return project_id is None or project_id == self.project_id


memory: HeardMemory[KnownRoom] = HeardMemory(ROOMS_KEY, ttl=REMEMBER_S)


def known_room(user: AnyUser, room_id) -> dict | None:
    """read_room's answer from memory, when this process can vouch for it and `user` may read
    it; None: ask rooms.access."""
    try:
        pk = uuid.UUID(str(room_id))
    except ValueError:
        return None
    known = memory.get(pk)
    if known is None or not known.readable_by(user):
        return None
    return dict(known.answer)


def read_and_remember(room: Room, generation: int) -> dict:
    """The Room's answer, remembered with who may read it. `generation`: memory.generation
    before `room` was read."""
    members = frozenset(room.members.values_list("pk", flat=True))
    answer = room.as_dict()
    known = KnownRoom(answer, room.owner_id, members, room.project_id, room.is_local)
    memory.put(room.pk, known, generation)
    return dict(answer)


def forget_rooms(**_details) -> list[str]:
    return [ROOMS_KEY]


for change in (
    changes.room_saved,
    changes.room_deleted,
    changes.project_saved,
    changes.person_saved,
    changes.person_deleted,  # who leaves the Rooms they belonged to without an m2m signal
):
    change.react(forget_rooms)


@changes.room_members.react
def members_changed(action, **_details) -> list[str] | None:
    return [ROOMS_KEY] if action.startswith("post_") else None
