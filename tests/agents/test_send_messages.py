import pytest

from agents.models import AgentProfile, InboxEntry, Message, MessageKey, agent_key
from agents.sending import send_agent_message, send_channel_message
from osfoundry import wakeups
from osfoundry.errors import Conflict, Invalid, NotFound


def send(sender, to, body="hi", key="key-00001", **extra):
    return send_agent_message(sender=sender, to=to, body=body, idempotency_key=key, **extra)


def inbox(profile):
    return list(
        InboxEntry.objects.filter(recipient=profile)
        .order_by("sequence")
        .values_list("sequence", "message__body", "via")
    )


def test_a_direct_message_lands_in_the_recipients_inbox(alice, bob):
    result = send(alice, "bob-codex", "is the migration done?")
    assert result.delivered == [{"handle": "bob-codex", "via": "to", "started": False}]
    assert result.skipped == []
    assert inbox(bob) == [(1, "is the migration done?", "to")]
    assert inbox(alice) == []


def test_each_recipient_has_its_own_sequence(alice, bob, profile_factory, stranger):
    carol = profile_factory(stranger, "carol")
    send(alice, "bob-codex", key="key-00001")
    send(alice, "bob-codex carol", key="key-00002")
    send(alice, "@carol", key="key-00003")
    assert [s for s, *_ in inbox(bob)] == [1, 2]
    assert [s for s, *_ in inbox(carol)] == [1, 2]
    carol.refresh_from_db()
    assert carol.last_inbox_sequence == 2


def test_skipped_handles_say_why(alice, bob, profile_factory, stranger, django_user_model):
    profile_factory(stranger, "sleepy", is_reachable=False)
    outsider = django_user_model.objects.create_user("outsider")
    AgentProfile.objects.create(handle="hidden", owner=outsider)  # shares no project
    result = send(alice, "bob-codex, nobody, sleepy, hidden, alice-claude")
    assert result.delivered == [{"handle": "bob-codex", "via": "to", "started": False}]
    assert [(s["handle"], s["reason"]) for s in result.skipped] == [
        ("nobody", "unknown_handle"),
        ("sleepy", "not_reachable"),
        ("hidden", "unknown_handle"),
        ("alice-claude", "self"),
    ]
    assert Message.objects.get().skipped == result.skipped


def test_a_message_nobody_can_receive_is_refused_and_not_stored(alice):
    with pytest.raises(NotFound) as error:
        send(alice, "nobody")
    assert error.value.code == "no_recipient"
    assert "nobody: no agent you can reach has this handle" in error.value.message
    assert not Message.objects.exists()


def test_a_body_mention_reaches_the_inbox_but_starts_nothing(
    alice, bob, profile_factory, owner, django_capture_on_commit_callbacks
):
    runner = profile_factory(owner, "alice-runner", kind=AgentProfile.Kind.OSFOUNDRY)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = send(alice, "bob-codex", "fyi @alice-runner and @bob-codex")
    assert result.delivered == [
        {"handle": "bob-codex", "via": "to", "started": False},
        {"handle": "alice-runner", "via": "mention", "started": False},
    ]
    entry = InboxEntry.objects.get(recipient=runner)
    assert (entry.via, entry.starts_run) == ("mention", False)
    assert callbacks  # the wake-up waits for commit


def test_an_osfoundry_agent_in_to_starts_only_for_its_owners_agents(
    alice, bob, profile_factory, owner
):
    profile_factory(owner, "alice-runner", kind=AgentProfile.Kind.OSFOUNDRY)
    mine = send(alice, "alice-runner", key="key-00001")
    assert mine.delivered == [{"handle": "alice-runner", "via": "to", "started": True}]
    with pytest.raises(NotFound) as error:
        send(bob, "alice-runner", key="key-00002")
    assert "an osFoundry agent of another person" in error.value.message


def test_wake_ups_wait_for_commit_and_name_only_recipients(
    alice, bob, profile_factory, stranger, django_capture_on_commit_callbacks, monkeypatch
):
    carol = profile_factory(stranger, "carol")
    woken = []
    monkeypatch.setattr(wakeups, "notify", lambda keys, hints=None: woken.append(sorted(keys)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        send(alice, "bob-codex")
    assert woken == []
    for callback in callbacks:
        callback()
    assert woken == [[agent_key(bob.pk)]]
    assert agent_key(carol.pk) not in woken[0]


def test_a_retry_with_the_same_key_is_a_replay(alice, bob):
    first = send(alice, "bob-codex", "hello", key="alice-q-0001")
    again = send(alice, "bob-codex", "hello", key="alice-q-0001")
    assert again.replay and not first.replay
    assert again.message.pk == first.message.pk
    assert again.delivered == first.delivered
    assert again.as_dict()["replay"] is True
    assert Message.objects.count() == 1
    assert len(inbox(bob)) == 1


def test_the_same_key_with_different_content_is_refused(alice, bob):
    send(alice, "bob-codex", "hello", key="alice-q-0001")
    with pytest.raises(Conflict) as error:
        send(alice, "bob-codex", "a new question", key="alice-q-0001")
    assert error.value.code == "idempotency_key_reused"
    assert error.value.field == "idempotency_key"
    assert Message.objects.count() == 1


def test_keys_are_scoped_per_sender(alice, bob):
    send(alice, "bob-codex", "hello", key="shared-key-1")
    send(bob, "alice-claude", "hello", key="shared-key-1")
    assert MessageKey.objects.count() == 2


def test_body_limits(alice, bob):
    with pytest.raises(Invalid) as error:
        send(alice, "bob-codex", "x" * 20_001)
    assert error.value.message == "body: 20001 characters, at most 20000; split the message"
    with pytest.raises(Invalid):
        send(alice, "bob-codex", "   ")
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("a\x00b", "control character U+0000 (NULL) is invisible where it is shown"),
        ("a\ud800b", "lone surrogate U+D800 is not a character: no UTF-8 text can hold it"),
        (
            "a\u2066b",
            "bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE) can make the text around it "
            "read differently than it is",
        ),
        ("a\x1b[31mb", "control character U+001B (ESCAPE) is invisible where it is shown"),
    ],
)
def test_a_body_refuses_what_no_database_can_store_and_what_a_reader_would_misread(
    alice, bob, body, problem
):
    with pytest.raises(Invalid) as error:
        send(alice, "bob-codex", body)
    assert error.value.message == f"body: column 2: {problem}; remove it from the message"
    assert error.value.field == "body"
    assert not Message.objects.exists()


def test_a_body_keeps_its_tabs_and_newlines(alice, bob):
    send(alice, "bob-codex", "a\tb\r\nc\nd")
    assert Message.objects.get().body == "a\tb\r\nc\nd"


def test_replies_join_the_thread_root(alice, bob):
    root = send(alice, "bob-codex", "question", key="key-00001").message
    reply = send(bob, "alice-claude", "answer", key="key-00002", thread_root_id=str(root.pk))
    again = send(
        alice, "bob-codex", "thanks", key="key-00003", thread_root_id=str(reply.message.pk)
    )
    assert reply.message.thread_root == root
    assert again.message.thread_root == root


def test_a_thread_root_you_cannot_see_is_not_found(alice, bob, profile_factory, stranger):
    carol = profile_factory(stranger, "carol")
    private = send(alice, "bob-codex", "secret", key="key-00001").message
    with pytest.raises(NotFound):
        send(carol, "bob-codex", "hi", key="key-00002", thread_root_id=str(private.pk))
    with pytest.raises(NotFound):
        send(carol, "bob-codex", "hi", key="key-00003", thread_root_id="not-a-uuid")


def test_channel_messages_reach_addressed_and_mentioned_members(
    alice, bob, profile_factory, stranger, channel_factory
):
    carol = profile_factory(stranger, "carol")
    dave = profile_factory(stranger, "dave")
    channel = channel_factory(members=[alice, bob, carol])
    result = send_channel_message(
        sender=alice,
        channel="general",
        to="bob-codex dave",
        body="@carol please review; @nobody",
        idempotency_key="key-00001",
    )
    assert result.delivered == [
        {"handle": "bob-codex", "via": "to", "started": False},
        {"handle": "carol", "via": "mention", "started": False},
    ]
    assert [(s["handle"], s["reason"]) for s in result.skipped] == [
        ("dave", "not_permitted"),
        ("nobody", "unknown_handle"),
    ]
    assert result.message.channel == channel
    assert inbox(dave) == []


def test_a_channel_post_starts_another_persons_agent_only_if_it_accepts(
    alice, bob, profile_factory, member, channel_factory
):
    shy = profile_factory(member, "bob-runner", kind=AgentProfile.Kind.OSFOUNDRY)
    open_ = profile_factory(
        member, "bob-helper", kind=AgentProfile.Kind.OSFOUNDRY, accepts_replies_in_channels=True
    )
    channel_factory(members=[alice, bob, shy, open_])
    result = send_channel_message(
        sender=alice,
        channel="general",
        to="bob-runner bob-helper",
        body="go",
        idempotency_key="k-000001",
    )
    assert result.delivered == [{"handle": "bob-helper", "via": "to", "started": True}]
    assert [(s["handle"], s["reason"]) for s in result.skipped] == [("bob-runner", "not_permitted")]


def test_only_members_post_to_a_channel(alice, bob, channel_factory):
    channel_factory(members=[bob])
    with pytest.raises(NotFound) as error:
        send_channel_message(sender=alice, channel="general", body="hi", idempotency_key="k-000001")
    assert error.value.field == "channel"
    assert not Message.objects.exists()


def test_channel_sends_are_idempotent(alice, bob, channel_factory):
    channel = channel_factory(members=[alice, bob])
    args = {
        "sender": alice,
        "channel": str(channel.pk),
        "body": "@bob-codex hi",
        "idempotency_key": "k-000001",
    }
    first = send_channel_message(**args)
    again = send_channel_message(**args)
    assert again.replay and again.message.pk == first.message.pk
    with pytest.raises(Conflict):
        send_channel_message(**{**args, "body": "changed"})
    assert len(inbox(bob)) == 1


def test_old_send_keys_are_purged_and_messages_stay(alice, bob):
    from datetime import timedelta

    from django.utils import timezone

    from osfoundry.idempotency import purge_expired_keys

    send(alice, "bob-codex", "old", key="alice-old-0001")
    send(alice, "bob-codex", "new", key="alice-new-0001")
    MessageKey.objects.filter(key="alice-old-0001").update(
        created_at=timezone.now() - timedelta(days=31)
    )
    assert purge_expired_keys(older_than_days=30)["message key"] == 1
    assert list(MessageKey.objects.values_list("key", flat=True)) == ["alice-new-0001"]
    assert Message.objects.count() == 2


def test_more_than_twenty_recipients_are_refused_and_nothing_is_stored(alice, bob):
    many = " ".join(f"agent-{n}" for n in range(21))
    with pytest.raises(Invalid) as error:
        send(alice, many)
    assert (error.value.field, error.value.message) == (
        "to",
        "to: 21 handles, at most 20; post to a channel instead",
    )
    assert not Message.objects.exists()


@pytest.mark.parametrize("to", ["", "  ", " , ; "])
def test_an_empty_to_is_refused_and_nothing_is_stored(alice, to):
    with pytest.raises(Invalid) as error:
        send(alice, to)
    assert error.value.message == "to: name at least one handle, e.g. 'bob-codex'"
    assert not Message.objects.exists()


def test_a_reply_stays_where_its_thread_started(alice, bob, channel_factory):
    channel_factory(name="general", members=[alice, bob])
    channel_factory(name="ops", members=[alice, bob])
    root = send_channel_message(
        sender=alice, channel="general", body="plan?", idempotency_key="root-0001"
    ).message
    with pytest.raises(Invalid) as in_another_channel:
        send_channel_message(
            sender=bob,
            channel="ops",
            body="here",
            thread_root_id=str(root.pk),
            idempotency_key="reply-001",
        )
    assert in_another_channel.value.message == (
        "thread_root_id: the thread belongs to #general; reply where it started"
    )
    with pytest.raises(Invalid) as as_a_direct_message:
        send(bob, "alice-claude", thread_root_id=str(root.pk), key="reply-002")
    assert as_a_direct_message.value.field == "thread_root_id"
    assert Message.objects.count() == 1


def test_a_failed_wake_up_publish_loses_no_message(
    alice, bob, caplog, settings, django_capture_on_commit_callbacks
):
    # Redis refuses the publish: the message is stored and the send answers; the recipient
    # finds it at its next read (a wake-up is a hint, never the message).
    wakeups.configure("redis://127.0.0.1:1/0", "unreachable")
    try:
        with (
            caplog.at_level("WARNING", logger="osfoundry.wakeups.bridge"),
            django_capture_on_commit_callbacks(execute=True),
        ):
            result = send(alice, "bob-codex", "still stored", key="key-red-01")
    finally:
        wakeups.configure(settings.REDIS_URL, settings.REDIS_PREFIX)
    assert [d["handle"] for d in result.delivered] == ["bob-codex"]
    assert inbox(bob) == [(1, "still stored", "to")]
    assert any(
        r.getMessage().startswith("could not publish wake-up for ['agent:") for r in caplog.records
    )


@pytest.mark.parametrize("key", ["key-\x00-00001", "key-\u202e-00001"])
def test_a_send_refuses_a_key_with_a_control_character_and_stores_nothing(
    alice, bob, channel_factory, key
):
    # The rule lives with the keys (osfoundry/idempotency.py): proposals and sends share it.
    channel_factory(members=[alice, bob])
    sends = [
        lambda: send(alice, "bob-codex", key=key),
        lambda: send_channel_message(
            sender=alice, channel="general", body="hi", idempotency_key=key
        ),
    ]
    for operation in sends:
        with pytest.raises(Invalid) as error:
            operation()
        assert error.value.field == "idempotency_key"
        assert error.value.message.startswith("idempotency_key: column 5: ")
        assert error.value.message.endswith("; remove it from the key")
    assert not Message.objects.exists()
    assert not MessageKey.objects.exists()


def test_a_channel_name_in_two_projects_needs_its_id_unless_the_token_has_a_project(
    alice, bob, project, owner, member
):
    from agents.models import AccessToken
    from agents.services import create_channel
    from rooms.models import Project

    other = Project.objects.create(name="Other")
    other.members.add(owner, member)
    ours = create_channel(project=project, name="general", members=[alice, bob])
    theirs = create_channel(project=other, name="general", members=[alice, bob])

    def post(channel, key):
        return send_channel_message(sender=alice, channel=channel, body="hi", idempotency_key=key)

    with pytest.raises(Invalid) as error:
        post("#general", "k-000001")
    assert error.value.field == "channel"
    assert "'#general' names channels in several projects; pass the channel id" in str(
        error.value.message
    )
    assert not Message.objects.exists()
    assert post(str(theirs.pk), "k-000002").message.channel == theirs
    # alice's token is given a project (an admin's edit): the name is no longer ambiguous,
    # and the other project's channel is out of its reach.
    token_id = int(alice.connection_key.removeprefix("pat:"))
    AccessToken.objects.filter(pk=token_id).update(project=project)
    assert post("general", "k-000003").message.channel == ours
    with pytest.raises(NotFound):
        post(str(theirs.pk), "k-000004")
    assert Message.objects.filter(channel=theirs).count() == 1
