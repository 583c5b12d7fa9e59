"""The owner manages the tab bar and rolls apps back; each change is a Room event."""

import pytest

from osfoundry.errors import Conflict, Forbidden, Invalid, NotFound
from rooms.access import list_room_apps
from rooms.events import room_events_after
from rooms.launcher.tabs import (
    app_revision,
    move_app,
    remove_app,
    rename_app,
    restore_app,
    rollback_app,
)
from rooms.models import LauncherApp
from rooms.review.revisions import propose_update
from rooms.services import approve_proposal
from tests.rooms.helpers import propose


@pytest.fixture
def apps(room, owner, agent, files):
    made = []
    for index, name in enumerate(["Timer", "Board", "Poll"]):
        proposal = propose(room, agent, files, key=f"key-tabs-{index}", name=name)
        made.append(approve_proposal(owner=owner, proposal_id=proposal.pk))
    return made


def names(room, user):
    return [app["name"] for app in list_room_apps(user, room.pk)]


def last_event(owner, room):
    return room_events_after(owner, room.pk)["events"][-1]


def call(service, owner, app, **extra):
    return service(owner=owner, room_id=app.room_id, instance_id=app.pk, **extra)


def test_remove_and_restore_a_tab(room, owner, member, apps):
    call(remove_app, owner, apps[0])
    assert names(room, member) == ["Board", "Poll"]
    removed = LauncherApp.objects.get(pk=apps[0].pk)
    assert removed.is_removed and removed.removed_at and removed.revisions.count() == 1
    event = last_event(owner, room)
    assert (event["type"], event["position"], event["by"]) == ("app.removed", None, "owner")
    with pytest.raises(Conflict):
        call(remove_app, owner, apps[0])
    call(restore_app, owner, apps[0])
    assert names(room, member) == ["Board", "Poll", "Timer"]  # back at the end
    event = last_event(owner, room)
    assert (event["type"], event["position"], event["by"]) == ("app.restored", 3, "owner")
    assert (event["instance_id"], event["name"], event["kind"]) == (
        str(apps[0].pk),
        "Timer",
        "snippet",
    )
    assert (event["revision"], event["build_state"]) == (1, "ready")
    with pytest.raises(Conflict):
        call(restore_app, owner, apps[0])


def test_move_tabs_left_and_right(room, owner, member, apps):
    call(move_app, owner, apps[2], direction="left")
    assert names(room, member) == ["Timer", "Poll", "Board"]
    event = last_event(owner, room)
    assert event["type"] == "app.moved"
    assert event["order"] == [str(apps[0].pk), str(apps[2].pk), str(apps[1].pk)]
    call(move_app, owner, apps[0], direction="right")
    assert names(room, member) == ["Poll", "Timer", "Board"]
    with pytest.raises(Conflict) as caught:
        call(move_app, owner, apps[2], direction="left")
    assert "leftmost" in caught.value.message
    with pytest.raises(Invalid):
        call(move_app, owner, apps[0], direction="up")


def test_rename_a_tab(room, owner, member, apps):
    call(rename_app, owner, apps[1], name="  Sprint board ")
    assert names(room, member) == ["Timer", "Sprint board", "Poll"]
    event = last_event(owner, room)
    assert (event["type"], event["previous_name"]) == ("app.renamed", "Board")
    for bad in ["", "   ", "x" * 201, "a\u202eb"]:
        with pytest.raises(Invalid) as caught:
            call(rename_app, owner, apps[1], name=bad)
        assert caught.value.field == "name"
    assert names(room, member)[1] == "Sprint board"


def test_members_and_strangers_cannot_manage_tabs(room, member, stranger, apps):
    for service, extra in [
        (remove_app, {}),
        (move_app, {"direction": "right"}),
        (rename_app, {"name": "Mine"}),
    ]:
        with pytest.raises(Forbidden):
            call(service, member, apps[0], **extra)
        with pytest.raises(NotFound):
            call(service, stranger, apps[0], **extra)
    assert names(room, member) == ["Timer", "Board", "Poll"]


def update_and_approve(app, owner, agent, files, marker):
    result = propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files={**files, "src/App.tsx": files["src/App.tsx"] + f"\n// {marker}\n"},
        idempotency_key=f"update-{marker}-00",
    )
    return approve_proposal(owner=owner, proposal_id=result.proposal.pk)


def test_rollback_is_a_new_revision_with_the_earlier_content(room, owner, agent, files, apps):
    app = apps[0]
    first_proposal = app.proposal_id
    update_and_approve(app, owner, agent, files, "v2")
    app = call(rollback_app, owner, app, to_revision=1, expected_revision=2)
    assert app.revision == 3 and app.proposal_id == first_proposal
    latest = app.revisions.get(number=3)
    assert latest.rolled_back_to == 1 and latest.approved_by == owner
    event = last_event(owner, room)
    assert event["type"] == "app.rolled_back"
    assert (event["revision"], event["rolled_back_to"]) == (3, 1)
    # The position and the instance (and so the browser storage key) stay.
    assert app.position == 0 and LauncherApp.objects.filter(room=room).count() == 3


def test_a_rollback_takes_the_versions_name_unless_the_owner_renamed_the_tab_since(
    room, owner, agent, files, apps
):
    app = apps[0]
    result = propose_update(
        caller=agent,
        room_id=str(app.room_id),
        instance_id=str(app.pk),
        files={**files, "src/App.tsx": files["src/App.tsx"] + "\n// v2\n"},
        idempotency_key="update-named-00",
        name="Timer two",
    )
    approve_proposal(owner=owner, proposal_id=result.proposal.pk)
    app = call(rollback_app, owner, app, to_revision=1, expected_revision=2)
    assert app.name == "Timer"  # v1's content under v1's name: nothing of the owner's undone


def test_a_rollback_after_a_rename_keeps_the_rename(room, owner, member, agent, files, apps):
    app = apps[0]
    update_and_approve(app, owner, agent, files, "v2")
    call(rename_app, owner, app, name="Standup clock")
    app = call(rollback_app, owner, app, to_revision=1, expected_revision=2)
    # The content goes back to v1; the name is the owner's and stays.
    assert app.revision == 3 and app.name == "Standup clock"
    assert LauncherApp.objects.get(pk=app.pk).name == "Standup clock"
    assert app.revisions.get(number=3).name == "Standup clock"
    assert names(room, member)[0] == "Standup clock"
    event = last_event(owner, room)
    assert (event["type"], event["name"]) == ("app.rolled_back", "Standup clock")


def test_rollback_refuses_a_moved_app_and_unknown_revisions(
    room, owner, member, agent, files, apps
):
    app = apps[0]
    update_and_approve(app, owner, agent, files, "v2")
    with pytest.raises(Conflict) as caught:
        call(rollback_app, owner, app, to_revision=1, expected_revision=1)
    assert caught.value.code == "stale_revision"
    for number in (2, 7):
        with pytest.raises(Invalid) as caught:
            call(rollback_app, owner, app, to_revision=number, expected_revision=2)
        assert caught.value.field == "to_revision"
    with pytest.raises(Forbidden):
        call(rollback_app, member, app, to_revision=1, expected_revision=2)
    app.refresh_from_db()
    assert app.revision == 2


def test_a_revision_an_app_does_not_have_is_not_found(room, owner, member, apps):
    app, first = app_revision(member, room.pk, apps[0].pk, 1)
    assert (app.pk, first.number) == (apps[0].pk, 1)
    with pytest.raises(NotFound) as caught:
        app_revision(member, room.pk, apps[0].pk, 2)
    assert caught.value.field == "revision"
    assert caught.value.message == "“Timer” has no revision 2"


def test_a_removed_tab_is_not_moved(room, owner, member, apps):
    call(remove_app, owner, apps[1])
    for direction in ("left", "right"):
        with pytest.raises(Conflict) as caught:
            call(move_app, owner, apps[1], direction=direction)
        assert (caught.value.code, caught.value.message) == (
            "removed",
            "“Board” is removed; restore it first",
        )
    assert names(room, member) == ["Timer", "Poll"]
    assert last_event(owner, room)["type"] == "app.removed"


def test_a_rollback_from_a_revision_the_app_left_names_both_revisions(owner, agent, files, apps):
    update_and_approve(apps[0], owner, agent, files, "v2")
    with pytest.raises(Conflict) as caught:
        call(rollback_app, owner, apps[0], to_revision=1, expected_revision=1)
    assert (caught.value.code, caught.value.field) == ("stale_revision", "base_revision")
    assert caught.value.message == (
        "“Timer” moved on to v2 since you read v1; the card now shows the changes "
        "against v2. Review them and decide again"
    )


def test_every_revision_keeps_the_content_hash_of_the_proposal_it_shows(owner, agent, files, apps):
    # The revision pages' diffs are cached under these hashes.
    app = apps[0]
    update_and_approve(app, owner, agent, files, "v2")
    call(rollback_app, owner, app, to_revision=1, expected_revision=2)
    revisions = list(app.revisions.select_related("proposal").order_by("number"))
    assert [r.content_hash for r in revisions] == [r.proposal.content_hash for r in revisions]
    first, second, rolled_back = (r.content_hash for r in revisions)
    assert first == rolled_back != second and first


def test_a_revision_comes_with_its_proposal_and_approver(
    room, owner, member, apps, django_assert_num_queries
):
    _app, found = app_revision(member, room.pk, apps[1].pk, 1)
    with django_assert_num_queries(0):
        assert (found.proposal.name, found.approved_by.username) == ("Board", "owner")
