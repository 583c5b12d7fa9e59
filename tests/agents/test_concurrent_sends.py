import threading

import pytest
from django.db import connections

from agents.models import InboxEntry, Message, MessageKey
from agents.sending import send_agent_message


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_with_one_key_store_one_message(alice, bob):
    results, errors = [], []
    start = threading.Barrier(4)

    def attempt():
        try:
            start.wait()
            results.append(
                send_agent_message(
                    sender=alice, to="bob-codex", body="once", idempotency_key="alice-once-01"
                )
            )
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Message.objects.count() == 1
    assert MessageKey.objects.count() == 1
    assert InboxEntry.objects.filter(recipient=bob).count() == 1
    assert {r.message.pk for r in results} == {Message.objects.get().pk}
    assert sorted(r.replay for r in results) == [False, True, True, True]
