"""The mail thread's round: sends what is due, and survives any failure."""

import pytest
from django.core import mail

from notifications import mailer, services
from rooms.services import propose_snippet

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_round_sends_the_due_batch(settings, room, agent, files):
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="mailer-1"
    )
    assert mailer.run_once() == 1
    assert mail.outbox[0].to == ["owner@example.com"]


def test_a_round_that_fails_is_logged_not_raised(monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("database unreachable")

    monkeypatch.setattr(services, "send_due_emails", broken)
    assert mailer.run_once() == 0
    assert "the next round retries" in caplog.text


def test_no_thread_when_polling_is_off(settings):
    settings.PROPOSAL_EMAIL_POLL_SECONDS = 0
    mailer.start_in_background()
    assert not mailer.started.is_set()


def test_workers_sending_at_once_send_the_batch_once(settings, room, agent, files):
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="mailer-2"
    )
    services.settings_for(room.owner)  # the row exists: both workers race on the claim only
    start = Barrier(4)

    def worker():
        start.wait()
        return mailer.run_once()  # closes its thread's connection when done

    with ThreadPoolExecutor(4) as pool:
        sent = [future.result() for future in [pool.submit(worker) for _ in range(4)]]
    assert sum(sent) == 1
    assert len(mail.outbox) == 1
