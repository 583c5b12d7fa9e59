"""Who may read a Room is one rule, Room.objects.visible_to; the process memory that answers
read_room without the database (rooms/live/remembered_rooms.py) keeps the same rule for agents, and
the two must agree for every kind of caller."""

from agents.tokens import create_access_token
from osfoundry.auth import authenticate_bearer
from rooms.live.remembered_rooms import KnownRoom
from rooms.models import Project, Room

BOTH = "osfoundry:read osfoundry:write"


def remembered(room: Room) -> KnownRoom:
    members = frozenset(room.members.values_list("pk", flat=True))
    return KnownRoom(room.as_dict(), room.owner_id, members, room.project_id, room.is_local)


def test_the_memory_of_a_room_and_the_database_agree_on_who_may_read_it(
    project, owner, member, stranger, room_factory
):
    elsewhere = Project.objects.create(name="Elsewhere")
    project.members.add(member)
    elsewhere.members.add(member)  # a token can be made for a project of one's own only
    cloud = room_factory(name="Cloud", members=[member])
    local = room_factory(name="Desk", kind=Room.Kind.LOCAL, members=[member])
    callers = {
        "owner": owner,
        "member": member,
        "stranger": stranger,
        "member's token for this project": authenticate_bearer(
            create_access_token(user=member, scopes=BOTH, project_id=project.pk)[1]
        ).user,
        "member's token for another project": authenticate_bearer(
            create_access_token(user=member, scopes=BOTH, project_id=elsewhere.pk)[1]
        ).user,
    }
    answers = {}
    for name, user in callers.items():
        for room in (cloud, local):
            in_database = (
                Room.objects.visible_to(user).filter(pk=room.pk).exists() and not room.is_local
            )
            assert remembered(room).readable_by(user) is in_database, (name, room.name)
            answers[name, room.name] = in_database
    assert answers == {
        ("owner", "Cloud"): True,
        ("owner", "Desk"): False,
        ("member", "Cloud"): True,
        ("member", "Desk"): False,
        ("stranger", "Cloud"): False,
        ("stranger", "Desk"): False,
        ("member's token for this project", "Cloud"): True,
        ("member's token for this project", "Desk"): False,
        ("member's token for another project", "Cloud"): False,
        ("member's token for another project", "Desk"): False,
    }


def test_an_anonymous_caller_reads_no_room_and_no_project(project, room_factory):
    from django.contrib.auth.models import AnonymousUser

    room_factory(name="Cloud")
    assert Room.objects.exists() and Project.objects.exists()
    assert list(Room.objects.visible_to(AnonymousUser())) == []
    assert list(Project.objects.readable_by(AnonymousUser())) == []
