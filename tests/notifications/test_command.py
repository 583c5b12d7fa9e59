"""`manage.py send_proposal_emails`: the cron way to send what the mail thread would."""

from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command

from rooms.services import propose_snippet


@pytest.fixture(autouse=True)
def locmem_mail(settings):
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}


def send() -> str:
    out = StringIO()
    call_command("send_proposal_emails", stdout=out)
    return out.getvalue().strip()


def test_the_command_sends_what_is_due_and_says_how_many(room, owner, agent, files):
    propose_snippet(
        caller=agent, room_id=str(room.pk), name="Timer", files=files, idempotency_key="cmd-00001"
    )
    assert send() == "1 email sent"
    assert [m.to for m in mail.outbox] == [["owner@example.com"]]
    assert send() == "0 emails sent"
