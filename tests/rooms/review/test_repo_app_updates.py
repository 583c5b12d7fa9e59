"""A new version of the repository an approved app came from updates that app: its card shows
the diff between the two versions, and approval replaces the app in place."""

import pytest
from django.urls import reverse

from osfoundry.errors import Invalid
from rooms.models import LauncherApp
from rooms.services import approve_proposal
from tests.rooms.helpers import pin, propose_version


def test_a_new_version_updates_the_app_and_its_card_shows_the_diff(
    client, room, owner, agent, repository, files
):
    first = pin(repository, files, "a")
    app = approve_proposal(
        owner=owner, proposal_id=propose_version(room, agent, first, "repo-key-1").pk
    )
    changed = {**files, "src/App.tsx": files["src/App.tsx"] + "\n// version two\n"}
    second = pin(repository, changed, "b")
    update = propose_version(room, agent, second, "repo-key-2")
    assert update.is_update and update.app_id == app.pk and update.base_revision == 1

    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[update.pk])).content.decode()
    assert f"Changes since the approved version (v1, {first.short_hash})" in html
    assert "version two" in html and "Approve as v2, replacing v1" in html

    approve_proposal(owner=owner, proposal_id=update.pk)
    app.refresh_from_db()
    assert (app.revision, app.proposal_id) == (2, update.pk)
    assert LauncherApp.objects.filter(room=room).count() == 1


def test_proposing_the_version_the_app_runs_is_refused(room, owner, agent, repository, files):
    first = pin(repository, files, "a")
    approve_proposal(owner=owner, proposal_id=propose_version(room, agent, first, "repo-key-1").pk)
    with pytest.raises(Invalid) as refused:
        propose_version(room, agent, first, "repo-key-2")
    assert (
        refused.value.field == "version_id" and "already runs this version" in refused.value.message
    )


def test_a_version_proposed_again_after_the_app_moved_on_is_a_card_against_the_new_revision(
    room, owner, agent, repository, files
):
    def edit(text):
        return {**files, "src/App.tsx": files["src/App.tsx"] + f"\n// {text}\n"}

    app = approve_proposal(
        owner=owner,
        proposal_id=propose_version(room, agent, pin(repository, files, "a"), "k-0001").pk,
    )
    second = pin(repository, edit("two"), "b")
    waiting = propose_version(room, agent, second, "k-0002")
    approve_proposal(
        owner=owner,
        proposal_id=propose_version(room, agent, pin(repository, edit("3"), "c"), "k-3").pk,
    )
    # The same version again, now that the app is at rev 2: what it would replace changed, so
    # it is not the rev-1 card still pending but a new one, with the diff against rev 2.
    again = propose_version(room, agent, second, "k-0004")
    assert again.pk != waiting.pk
    assert (again.app_id, again.base_revision, waiting.base_revision) == (app.pk, 2, 1)
