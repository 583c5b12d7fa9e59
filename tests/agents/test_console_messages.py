"""The console's Messages through Django's client: what a person reads (and a stranger never
does), their own handle, writing through the agents' send functions, unread counts, paging."""

import pytest
from django.urls import reverse

from agents.conversations import claim_person_handle
from agents.models import AgentProfile, InboxEntry, Message
from agents.sending import send_agent_message, send_channel_message


@pytest.fixture
def general(channel_factory, alice, bob):
    return channel_factory("general", members=[alice, bob])


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def ada(owner, alice):
    """The owner's own handle (alice-claude is the owner's agent)."""
    return claim_person_handle(user=owner, handle="ada").profile


def post(bob, general, body, key, **kw):
    return send_channel_message(
        sender=bob, channel=str(general.pk), body=body, idempotency_key=key, **kw
    )


def test_a_person_reads_their_agents_channel_with_sender_kind_and_thread(
    owner_client, general, bob
):
    root = post(bob, general, "schema migrated", "bob-key-001").message
    post(bob, general, "details inside", "bob-key-002", thread_root_id=str(root.pk))
    page = owner_client.get(reverse("agents:channel", args=[general.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "#general" in html and "schema migrated" in html
    assert "@bob-codex" in html and ">agent<" in html
    assert "data-reply-count>1</span> reply" in html
    assert "details inside" not in html  # replies live in the thread view
    thread = owner_client.get(reverse("agents:thread", args=[root.pk]))
    assert "details inside" in thread.content.decode()


def test_a_stranger_sees_nothing_of_the_channel_or_its_threads(client, stranger, general, bob):
    root = post(bob, general, "private plans", "bob-key-003").message
    client.force_login(stranger)
    assert client.get(reverse("agents:channel", args=[general.pk])).status_code == 404
    assert client.get(reverse("agents:thread", args=[root.pk])).status_code == 404
    live = client.get(reverse("agents:live"), {"conversation": f"channel:{general.pk}"})
    assert live.status_code == 404
    index = client.get(reverse("agents:messages")).content.decode()
    assert "general" not in index and "private plans" not in index


def test_a_person_claims_a_handle_under_the_agents_rules(owner_client, owner):
    refused = owner_client.post(reverse("agents:claim_handle"), {"handle": "here"})
    assert refused.status_code == 400
    assert "handle: &#x27;here&#x27; is reserved" in refused.content.decode()
    assert not AgentProfile.objects.filter(owner=owner).exists()
    claimed = owner_client.post(reverse("agents:claim_handle"), {"handle": "ada"})
    assert claimed.status_code == 302
    profile = AgentProfile.objects.get(owner=owner)
    assert (profile.handle, profile.kind) == ("ada", AgentProfile.Kind.PERSON)


def test_a_taken_handle_is_refused_for_a_person_too(owner_client, alice):
    refused = owner_client.post(reverse("agents:claim_handle"), {"handle": "alice-claude"})
    assert refused.status_code == 409
    assert "already taken" in refused.content.decode()


def test_a_post_mentioning_an_agent_reaches_its_inbox_and_shows_the_report(
    owner_client, general, ada, bob
):
    response = owner_client.post(
        reverse("agents:send"),
        {
            "channel": general.pk,
            "body": "@bob-codex can you look?",
            "idempotency_key": "ui-key-0001",
        },
    )
    assert response.status_code == 302
    message = Message.objects.get(sender=ada)
    assert message.channel == general
    entry = InboxEntry.objects.get(recipient=bob)
    assert (entry.message, entry.via) == (message, "mention")
    assert general.members.filter(pk=ada.pk).exists()  # joined on first post
    page = owner_client.get(response["Location"]).content.decode()
    assert "Delivered to @bob-codex (mention)" in page


def test_a_double_submit_sends_once(owner_client, general, ada, bob):
    form = {
        "channel": general.pk,
        "to": "bob-codex",
        "body": "once",
        "idempotency_key": "ui-key-0002",
    }
    first = owner_client.post(reverse("agents:send"), form)
    second = owner_client.post(reverse("agents:send"), form)
    assert first["Location"] == second["Location"]
    assert Message.objects.filter(sender=ada).count() == 1
    assert InboxEntry.objects.filter(recipient=bob).count() == 1


@pytest.mark.parametrize(
    ("form", "field_message"),
    [
        ({"body": "", "to": "bob-codex"}, "body: must not be empty"),
        ({"body": "x" * 20001, "to": "bob-codex"}, "body: "),
        ({"body": "hi", "to": ""}, "to: name at least one handle"),
        ({"body": "hi", "to": "nobody-here"}, "to: nobody in `to` can receive"),
        ({"body": "hi", "to": "bob-codex", "idempotency_key": "short"}, "idempotency_key: "),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(owner_client, ada, bob, form, field_message):
    data = {"idempotency_key": "ui-bad-0001", **form}
    response = owner_client.post(reverse("agents:send"), data)
    assert 400 <= response.status_code < 500
    assert field_message in response.content.decode().replace("&#x27;", "'")
    assert not Message.objects.exists()


def test_writing_without_a_handle_asks_for_one(owner_client, alice):
    response = owner_client.post(
        reverse("agents:send"),
        {"to": "alice-claude", "body": "hi", "idempotency_key": "ui-key-0003"},
    )
    assert response.status_code == 404
    assert "handle: choose your handle" in response.content.decode()
    assert not Message.objects.exists()


def test_a_person_reads_and_answers_their_agents_direct_thread(
    owner_client, client, stranger, alice, bob, ada
):
    root = send_agent_message(
        sender=bob, to="alice-claude", body="need the schema", idempotency_key="bob-dm-01"
    ).message
    index = owner_client.get(reverse("agents:messages")).content.decode()
    assert "@alice-claude, @bob-codex" in index
    thread = owner_client.get(reverse("agents:thread", args=[root.pk])).content.decode()
    assert "need the schema" in thread
    assert 'value="bob-codex alice-claude"' in thread  # the reply's To, prefilled
    reply = owner_client.post(
        reverse("agents:send"),
        {
            "to": "bob-codex",
            "body": "sending it",
            "thread_root_id": root.pk,
            "idempotency_key": "ui-key-0004",
        },
    )
    assert reply.status_code == 302
    answer = Message.objects.get(sender=ada)
    assert answer.thread_root == root
    assert InboxEntry.objects.filter(recipient=bob, message=answer, via="to").exists()
    client.force_login(stranger)
    assert client.get(reverse("agents:thread", args=[root.pk])).status_code == 404


def test_unread_counts_until_the_person_opens_the_channel(owner_client, general, bob):
    post(bob, general, "one", "bob-key-011")
    post(bob, general, "two", "bob-key-012")
    index = owner_client.get(reverse("agents:messages")).content.decode()
    assert 'data-unread title="Unread messages">2<' in index
    owner_client.get(reverse("agents:channel", args=[general.pk]))
    index = owner_client.get(reverse("agents:messages")).content.decode()
    assert 'is-zero" data-unread title="Unread messages">0<' in index


def test_paging_back_through_a_channel(owner_client, general, bob):
    for n in range(35):
        post(bob, general, f"note {n:02d}", f"bob-page-{n:03d}")
    newest = owner_client.get(reverse("agents:channel", args=[general.pk]))
    assert newest.context["page"].messages[-1].body == "note 34"
    assert len(newest.context["page"].messages) == 30
    older = newest.context["page"].older
    assert older is not None
    back = owner_client.get(reverse("agents:channel", args=[general.pk]), {"before": older})
    assert [m.body for m in back.context["page"].messages] == [f"note {n:02d}" for n in range(5)]
    assert back.context["page"].older is None


def test_the_live_fragment_holds_only_what_the_page_is_missing(owner_client, general, bob):
    first = post(bob, general, "already shown", "bob-key-021").message
    post(bob, general, "new one", "bob-key-022")
    response = owner_client.get(
        reverse("agents:live"), {"conversation": f"channel:{general.pk}", "after": first.pk}
    )
    html = response.content.decode()
    assert "new one" in html and "already shown" not in html


def test_a_sent_form_resubmitted_with_other_text_gets_a_fresh_key_and_sends_nothing(
    owner_client, general, ada
):
    form = {"channel": general.pk, "body": "first", "idempotency_key": "ui-key-0005"}
    owner_client.post(reverse("agents:send"), form)
    again = owner_client.post(reverse("agents:send"), {**form, "body": "edited"})
    assert again.status_code == 409
    assert "already sent with other text" in again.content.decode()
    assert again.context["composer"]["idempotency_key"] != "ui-key-0005"
    assert again.context["composer"]["body"] == "edited"
    assert list(Message.objects.values_list("body", flat=True)) == ["first"]


def test_the_sidebar_costs_the_same_queries_for_many_threads_and_channels(
    owner_client, channel_factory, alice, bob
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert owner_client.get(reverse("agents:messages")).status_code == 200
        return len(captured.captured_queries)

    channel_factory("one", members=[alice, bob])
    send_agent_message(sender=bob, to="alice-claude", body="dm", idempotency_key="bob-q-0000")
    few = queries()
    for n in range(4):
        channel = channel_factory(f"more-{n}", members=[alice, bob])
        post(bob, channel, "hello", f"bob-q-c{n:03d}")
    for n in range(1, 12):
        send_agent_message(
            sender=bob, to="alice-claude", body="dm", idempotency_key=f"bob-q-{n:04d}"
        )
    assert queries() == few


@pytest.mark.parametrize(
    ("form", "message"),
    [
        (
            {"body": "before\x00after"},
            "body: column 7: control character U+0000 (NULL) is invisible where it is shown; "
            "remove it from the message",
        ),
        (
            {"body": "see\n\u202egnp.exe"},
            "body: line 2, column 1: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can "
            "make the text around it read differently than it is; remove it from the message",
        ),
        (
            {"to": "bob-codex x\x00"},
            "to: column 12: control character U+0000 (NULL) is invisible where it is shown; "
            "remove it from the handles",
        ),
        (
            {"to": "bob-codex \u202ex"},
            "to: column 11: bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) can make the "
            "text around it read differently than it is; remove it from the handles",
        ),
    ],
    ids=["nul-in-body", "override-in-body", "nul-in-to", "override-in-to"],
)
def test_a_nul_or_a_bidirectional_control_is_refused_naming_the_field(
    owner_client, ada, bob, form, message
):
    # A handle nobody has is stored with the skipped ones, and PostgreSQL's jsonb holds no NUL.
    data = {"to": "bob-codex", "body": "hi", "idempotency_key": "ui-key-0006", **form}
    response = owner_client.post(reverse("agents:send"), data)
    assert response.status_code == 400
    assert response.context["composer"]["error"] == message
    assert response.context["composer"]["error_field"] == next(iter(form))
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("handle", "remove"),
    [
        ("Not A Handle!", None),
        ("ada\x00", "'\\x00'"),
        ("ada\u202e", "'\\u202e'"),
        ("ada\n", "'\\n'"),  # `$` matches before a last newline: the pattern alone let it in
    ],
    ids=["pattern", "nul", "right-to-left-override", "trailing-newline"],
)
def test_a_handle_that_breaks_the_pattern_is_refused_naming_it(owner_client, owner, handle, remove):
    refused = owner_client.post(reverse("agents:claim_handle"), {"handle": handle})
    assert refused.status_code == 400
    error = refused.context["handle_error"]
    assert error.startswith("handle: ")
    if remove:
        assert error == f"handle: only lowercase letters, digits and hyphens; remove {remove}"
    assert not AgentProfile.objects.filter(owner=owner).exists()


def test_live_needs_a_known_conversation_and_a_thread_root(owner_client, ada, general, bob):
    assert owner_client.get(reverse("agents:live"), {"conversation": "bogus:1"}).status_code == 404
    root = post(bob, general, "root", "live-root-1").message
    reply = post(bob, general, "reply", "live-reply-1", thread_root_id=str(root.pk)).message
    response = owner_client.get(reverse("agents:thread", args=[reply.pk]))
    assert response.status_code == 404


def test_a_reply_into_a_conversation_that_is_not_there_is_a_404(owner_client, ada):
    for field in ("channel", "thread_root_id"):
        response = owner_client.post(
            reverse("agents:send"),
            {
                field: "0b0e0000-0000-4000-8000-000000000000",
                "body": "hi",
                "idempotency_key": "ui-nf-001",
            },
        )
        assert response.status_code == 404
    assert not Message.objects.exists()


def test_bad_input_in_a_channel_or_thread_keeps_the_person_there(owner_client, general, ada, bob):
    root = post(bob, general, "the plan", "bob-plan-01").message
    in_channel = owner_client.post(
        reverse("agents:send"), {"channel": general.pk, "body": "", "idempotency_key": "ui-ch-001"}
    )
    assert in_channel.status_code == 400
    assert "body: must not be empty" in in_channel.content.decode()
    assert "the plan" in in_channel.content.decode()  # the channel's page, with its messages
    in_thread = owner_client.post(
        reverse("agents:send"),
        {
            "channel": general.pk,
            "thread_root_id": root.pk,
            "body": "",
            "idempotency_key": "ui-th-001",
        },
    )
    assert in_thread.status_code == 400
    page = in_thread.content.decode()
    assert "body: must not be empty" in page and "the plan" in page
    assert f'name="thread_root_id" value="{root.pk}"' in page  # the reply form, still a reply
    assert Message.objects.filter(sender=ada).count() == 0


def test_a_new_direct_message_opens_its_own_thread(owner_client, ada, bob):
    response = owner_client.post(
        reverse("agents:send"),
        {"to": "bob-codex", "body": "a new topic", "idempotency_key": "ui-new-001"},
    )
    sent = Message.objects.get(sender=ada)
    assert (sent.channel, sent.thread_root) == (None, None)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('agents:thread', args=[sent.pk])}#m-{sent.pk}"
    assert InboxEntry.objects.filter(recipient=bob, message=sent, via="to").exists()
    thread = owner_client.get(response["Location"]).content.decode()
    assert "a new topic" in thread


def test_a_page_cursor_that_is_not_in_the_channel_is_a_404(owner_client, general, ada, bob):
    post(bob, general, "in general", "bob-cur-01")
    elsewhere = send_agent_message(
        sender=bob, to="alice-claude", body="direct", idempotency_key="bob-cur-02"
    ).message
    url = reverse("agents:channel", args=[general.pk])
    for cursor in (elsewhere.pk, "0b0e0000-0000-4000-8000-000000000000", "not-an-id"):
        response = owner_client.get(url, {"before": cursor})
        assert response.status_code == 404
        assert b"in general" not in response.content


def test_a_direct_thread_is_not_found_for_a_person_outside_it(stranger, alice, bob):
    from agents.conversations import get_direct_thread_for_user
    from osfoundry.errors import NotFound

    root = send_agent_message(
        sender=bob, to="alice-claude", body="private", idempotency_key="bob-dt-01"
    ).message
    assert get_direct_thread_for_user(bob.owner, root.pk) == root
    for root_id in (root.pk, "0b0e0000-0000-4000-8000-000000000000"):
        with pytest.raises(NotFound) as error:
            get_direct_thread_for_user(stranger, root_id)
        assert error.value.field == "thread_root_id"
