"""The console for daily use, server side: the account menu, error pages, the Room's byline and
Local Rooms, the card's tree and decided state, the admin's records and tokens."""

import pytest
from django.urls import reverse
from django.views.defaults import server_error

from agents.models import AccessToken
from osfoundry.auth import authenticate_bearer
from rooms.models import Proposal, Room
from rooms.services import approve_proposal
from tests.rooms.helpers import APP, propose


def test_the_account_menu_holds_password_two_factor_and_log_out(client, owner):
    client.force_login(owner)
    html = client.get("/").content.decode()
    menu = html[html.index("data-usermenu") : html.index("</details>")]
    for text in ("Password", "Two-factor", "Log out"):
        assert text in menu
    assert 'rel="icon" href="/static/favicon.svg"' in html


def test_a_missing_page_is_styled_and_says_what_404_means(client, owner):
    client.force_login(owner)
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'data-error-page="404"' in html and "Go to Needs your approval" in html
    assert "rooms/console.css" in html


def test_the_500_page_stands_alone(rf):
    response = server_error(rf.get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert 'data-error-page="500"' in html and "rooms/console.css" in html


def test_the_room_byline_and_a_local_room_explained(client, owner, room, room_factory):
    client.force_login(owner)
    html = client.get(reverse("rooms:room", args=[room.pk])).content.decode()
    assert "Owned by <strong><bdi>owner</bdi></strong> (you)" in html
    assert "data-local-explained" not in html
    local = room_factory(name="Desk", kind=Room.Kind.LOCAL)
    page = client.get(reverse("rooms:room", args=[local.pk])).content.decode()
    assert "A Local Room</strong> lives on one desktop" in page
    assert page.count('class="empty-state"') == 1 and "No apps in this Local Room." in page


def test_the_card_tree_is_in_natural_order_with_folders(client, owner, room, agent):
    files = {"src/App.tsx": APP.replace("Hello", "W")}
    for index in (1, 2, 10, 11):
        files[f"src/w/W{index}.ts"] = f"export const w{index} = {index};\n"
    proposal = propose(room, agent, files)
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    tree = html[html.index("data-file-list") : html.index("</ul>", html.index("data-file-list"))]
    names = ("<bdi>w</bdi>/", *(f"<bdi>W{n}.ts</bdi>" for n in (1, 2, 10, 11)), "<bdi>App.tsx")
    positions = [tree.index(name) for name in names]
    assert positions == sorted(positions)  # folders first, then W1, W2, W10, W11
    assert 'data-dir="src/w"' in tree
    assert "rooms/review-keys.js" in html and "data-keys-help" in html


def test_a_decided_card_reads_as_decided_and_offers_the_next_one(client, owner, room, agent, files):
    first = propose(room, agent, files, key="key-first-01", name="First")
    second = propose(room, agent, files, key="key-second-1", name="Second")
    approve_proposal(owner=owner, proposal_id=first.pk)
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[first.pk])).content.decode()
    # Its status shows once, in the banner at the top: who decided and when.
    assert html.count(">Approved<") == 1
    assert (
        "data-decision-status>Approved</span> by <strong><bdi>owner</bdi></strong> on <time" in html
    )
    assert "data-status-pill" not in html
    assert "data-viewed-count" not in html and "Review the files before approving" not in html
    assert f'href="{reverse("rooms:proposal", args=[second.pk])}" data-next-proposal' in html
    assert "data-decision-bar" not in html
    pending = client.get(reverse("rooms:proposal", args=[second.pk])).content.decode()
    assert "data-decision-bar" in pending and 'form="approve-form"' in pending
    approve_proposal(owner=owner, proposal_id=second.pk)
    done = client.get(reverse("rooms:proposal", args=[second.pk])).content.decode()
    assert "Nothing else waits for your review." in done


@pytest.fixture
def staff(owner):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    return owner


def test_admin_records_cannot_be_deleted_and_proposals_link_to_their_card(
    client, staff, room, agent, files
):
    proposal = propose(room, agent, files)
    client.force_login(staff)
    listing = client.get(reverse("admin:rooms_proposal_changelist")).content.decode()
    assert f'href="{proposal.get_absolute_url()}">Open the card</a>' in listing
    delete = reverse("admin:rooms_proposal_delete", args=[proposal.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert Proposal.objects.filter(pk=proposal.pk).exists()


def test_admin_creates_a_token_and_shows_it_once(client, staff, agent):
    client.force_login(staff)
    response = client.post(
        reverse("admin:agents_accesstoken_add"),
        {"user": agent.pk, "name": "ci bot", "scopes": "osfoundry:read"},
        follow=True,
    )
    html = response.content.decode()
    assert "Copy the token now; it is not shown again: osf_" in html
    raw = html.split("it is not shown again: ", 1)[1].split("<", 1)[0].strip()
    principal = authenticate_bearer(raw)
    assert principal.user == agent and principal.scopes == {"osfoundry:read"}
    stored = AccessToken.objects.get(name="ci bot")
    assert raw not in stored.token_hash
    again = client.get(reverse("admin:agents_accesstoken_change", args=[stored.pk]))
    assert raw not in again.content.decode()
    bad = client.post(
        reverse("admin:agents_accesstoken_add"),
        {"user": agent.pk, "name": "bad", "scopes": "admin"},
    )
    assert bad.status_code == 200 and not AccessToken.objects.filter(name="bad").exists()


def test_the_highlight_stylesheet_has_a_dark_mode(settings):
    from pathlib import Path

    css = (Path(settings.BASE_DIR) / "static" / "rooms" / "highlight.css").read_text()
    assert "@media (prefers-color-scheme: dark)" in css
    console = (Path(settings.BASE_DIR) / "static" / "rooms" / "console.css").read_text()
    assert "@media (prefers-color-scheme: dark)" in console


def test_admin_makes_a_project_token_and_lists_grants_and_email_choices(
    client, staff, agent, project, room
):
    client.force_login(staff)
    add = reverse("admin:agents_accesstoken_add")
    data = {"user": agent.pk, "name": "one project", "scopes": "osfoundry:read"}
    outside = client.post(add, {**data, "project": project.pk})
    assert outside.status_code == 200 and "is not a project of yours" in outside.content.decode()
    assert not AccessToken.objects.exists()
    project.members.add(agent)
    response = client.post(add, {**data, "project": project.pk}, follow=True)
    assert "it is not shown again" in response.content.decode()
    assert AccessToken.objects.get(name="one project").project_id == project.pk
    for name in (
        "admin:agents_clientgrant_changelist",
        "admin:notifications_notificationsettings_changelist",
    ):
        assert client.get(reverse(name)).status_code == 200
    assert client.get(reverse("admin:agents_clientgrant_add")).status_code == 403
