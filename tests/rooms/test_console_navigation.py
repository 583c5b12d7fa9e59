"""The console's navigation and the pages it leads to: one set of names, a Rooms item and its
page, inbox rows that tell proposals of one name apart, a version page's way back to its card,
and an update card that says which rename approving undoes."""

import re

import pytest
from django.urls import reverse

from rooms.launcher.tabs import rename_app
from rooms.models import Repository, RepositoryVersion
from rooms.review.revisions import propose_update
from rooms.services import approve_proposal, propose_repo_version
from tests.rooms.helpers import changed, propose

# The navigation's links, in order, and the name each page carries in it.
NAV = ["Rooms", "Needs your approval", "Messages", "Tokens", "Connected apps", "My agents"]


def nav_links(html: str) -> list[tuple[str, bool]]:
    """(text, is current) of each link of the main navigation."""
    nav = re.search(r'<nav class="mainnav".*?</nav>', html, re.S).group(0)
    links = re.findall(r"<a [^>]*?(aria-current=\"page\")?>(.*?)</a>", nav, re.S)
    return [(re.sub(r"<[^>]+>|\d+", "", text).strip(), bool(current)) for current, text in links]


@pytest.mark.parametrize(
    ("url", "current", "heading"),
    [
        (reverse("rooms:rooms"), "Rooms", "Rooms"),
        (reverse("rooms:inbox"), "Needs your approval", "Needs your approval"),
        (reverse("agents:messages"), "Messages", "Messages"),
        (reverse("agents:tokens"), "Tokens", "Tokens"),
        (reverse("agents:clients"), "Connected apps", "Connected apps"),
        (reverse("agents:agents"), "My agents", "My agents"),
    ],
)
def test_each_page_has_the_name_its_navigation_item_has(client, owner, room, url, current, heading):
    client.force_login(owner)
    html = client.get(url).content.decode()
    assert nav_links(html) == [(name, name == current) for name in NAV]
    assert f"<h1>{heading}</h1>" in html
    assert re.search(rf"<title>(\(\d+\) )?{heading} · osFoundry</title>", html)
    # "Connected → Needs your approval", as the agents' tools say it (SPEC §5).
    assert (
        '<span class="navgroup-label" id="nav-connected">Connected <span aria-hidden="true">→'
        in (html)
    )


def test_a_card_and_a_room_are_under_their_navigation_items(client, owner, room, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    card = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    assert ("Needs your approval", True) in nav_links(card)
    page = client.get(reverse("rooms:room", args=[room.pk])).content.decode()
    assert ("Rooms", True) in nav_links(page)


def test_rooms_lists_your_rooms_and_what_waits_for_you_in_each(
    client, owner, member, stranger, room, room_factory, agent, files
):
    quiet = room_factory(name="Quiet corner")
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    propose(room, agent, changed(files, "two"), key="key-00002", name="Board")
    rename_app(owner=owner, room_id=room.pk, instance_id=app.pk, name="Timer")  # no new tab
    client.force_login(owner)
    html = client.get(reverse("rooms:rooms")).content.decode()
    assert html.index("Quiet corner") < html.index("Team Falcon")  # by name
    assert reverse("rooms:room", args=[room.pk]) in html
    assert reverse("rooms:room", args=[quiet.pk]) in html
    assert "1 tab · " in html and "0 tabs" in html
    assert f'href="{reverse("rooms:inbox")}?room={room.pk}" data-room-pending>1 waiting' in html

    client.force_login(member)
    html = client.get(reverse("rooms:rooms")).content.decode()
    assert "Team Falcon" in html and "Quiet corner" not in html
    assert "waiting for your approval" not in html  # pending work is the owner's

    client.force_login(stranger)
    html = client.get(reverse("rooms:rooms")).content.decode()
    assert "You are not in any Room yet" in html and "Team Falcon" not in html


def test_inbox_rows_that_share_a_name_say_what_differs(client, owner, room, agent, files):
    first = propose(room, agent, files, key="key-00001", name="Timer")
    second = propose(room, agent, changed(files, "two"), key="key-00002", name="Timer")
    other = propose(room, agent, changed(files, "three"), key="key-00003", name="Board")
    client.force_login(owner)
    html = client.get(reverse("rooms:inbox")).content.decode()
    rows = re.findall(r'<tr data-proposal-id="([^"]+)"(.*?)</tr>', html, re.S)
    details = {
        pk: found.group(1)
        for pk, row in rows
        if (found := re.search(r'<span class="row-detail" data-row-detail>(.*?)</span>', row))
    }
    assert set(details) == {str(first.pk), str(second.pk)}  # "Board" is alone: no detail
    for proposal in (first, second):
        detail = details[str(proposal.pk)]
        assert detail.startswith("revision 1 · ")
        assert proposal.created_at.strftime("%b %-d, %H:%M UTC") in detail
        assert f"{proposal.total_bytes / 1024:.1f}\xa0KB" in detail
        assert f"<code {'title='}" in detail and f">{proposal.content_hash[:8]}</code>" in detail
    assert first.content_hash[:8] != second.content_hash[:8]
    assert f'data-hash="{other.content_hash[:8]}"' in html  # the page can tell them apart live


def test_a_version_page_links_back_to_the_card_that_showed_it(client, owner, stranger, room, agent):
    repository = Repository.objects.create(project=room.project, name="timer")
    files = {"src/App.tsx": "export default () => <p>Hi</p>;\n", "README.md": "# Timer\n"}
    version = RepositoryVersion.objects.create(
        repository=repository, commit_hash="c" * 40, files=files
    )
    proposal = propose_repo_version(
        caller=agent,
        room_id=str(room.pk),
        name="Timer",
        repository_id=str(repository.pk),
        version_id=str(version.pk),
        idempotency_key="repo-key-0001",
    ).proposal
    client.force_login(owner)
    card_url = reverse("rooms:proposal", args=[proposal.pk])
    card = client.get(card_url).content.decode()
    version_url = reverse("rooms:version", args=[repository.pk, version.pk])
    assert f'href="{version_url}?card={proposal.pk}" data-review-repo' in card

    page = client.get(f"{version_url}?card={proposal.pk}").content.decode()
    assert (
        f'<a href="{card_url}" data-back-to-card>← Back to the card “<bdi>Timer</bdi>”</a>' in page
    )
    # Browsing the version's files keeps the way back.
    assert f'href="?path=README.md&amp;card={proposal.pk}"' in page
    # Without it, the page still names the cards that showed the version, to their owner.
    plain = client.get(version_url).content.decode()
    assert "data-back-to-card" not in plain
    assert (
        f'<a href="{card_url}">the card “<bdi>Timer</bdi>”</a> (<bdi>Team Falcon</bdi>, pending)'
        in (plain)
    )
    # A card id that did not show this version leads nowhere.
    assert "data-back-to-card" not in client.get(f"{version_url}?card=nope").content.decode()


def test_an_update_card_says_which_version_it_makes_and_what_approving_renames(
    client, owner, room, agent, files
):
    app = approve_proposal(owner=owner, proposal_id=propose(room, agent, files).pk)
    update = propose_update(
        caller=agent,
        room_id=str(room.pk),
        instance_id=str(app.pk),
        files=changed(files, "v2"),
        idempotency_key="update-0001",
    ).proposal
    rename_app(owner=owner, room_id=room.pk, instance_id=app.pk, name="Standup clock")
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[update.pk])).content.decode()
    assert "Approve as v2, replacing v1" in html
    assert "now at v1: approving makes it v2, in place" in html
    assert (
        "Approving renames the tab “<bdi>Standup clock</bdi>” to “<bdi>Standup timer</bdi>”."
        in html
    )
