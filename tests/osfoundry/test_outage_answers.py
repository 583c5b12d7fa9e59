"""A database outage through Django's error handler: 503 with Retry-After, never a 500."""

import sys

from django.db import InterfaceError, OperationalError

from osfoundry import outage


def answer(rf, exc):
    try:
        raise exc
    except Exception:
        assert sys.exc_info()[1] is exc
        return outage.server_error(rf.get("/"))


def test_an_outage_is_a_503_with_retry_after(rf, caplog):
    for exc in (OperationalError("connection refused\nmore"), InterfaceError("closed")):
        response = answer(rf, exc)
        assert response.status_code == 503
        assert response["Retry-After"] == str(outage.RETRY_AFTER_S)
        assert response["Cache-Control"] == "no-store"
        assert b'"code": "database_unavailable"' in response.content
    assert "database unreachable" in caplog.text and "more" not in caplog.text


def test_any_other_error_is_djangos_500(rf):
    response = answer(rf, RuntimeError("a bug"))
    assert response.status_code == 500
    assert b"database_unavailable" not in response.content


def test_the_retry_after_header_for_asgi_routes():
    assert outage.retry_after_header() == (b"retry-after", str(outage.RETRY_AFTER_S).encode())
    assert outage.DatabaseUnavailable().message.endswith(f"retry in {outage.RETRY_AFTER_S} s")
