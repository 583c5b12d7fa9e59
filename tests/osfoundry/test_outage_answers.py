"""A database outage on Django's pages and the MCP endpoint: 503 with Retry-After, never a 500
or a traceback; a person's browser gets a page that retries, a script the JSON error."""

import sys
from contextlib import contextmanager

import httpx
import pytest
from django.db import InterfaceError, OperationalError
from django.db.backends.utils import CursorWrapper

from osfoundry import outage
from osfoundry.mcp import protocol


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


@contextmanager
def database_down():
    """Every query inside fails as with PostgreSQL stopped."""

    def refuse(*args, **kwargs):
        raise OperationalError("connection refused\nIs the server running?")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CursorWrapper, "execute", refuse)
        yield


def test_a_console_page_in_an_outage_is_a_page_that_retries(client, owner, caplog):
    client.force_login(owner)  # before the outage: the session is stored
    with database_down():
        response = client.get("/", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert response.status_code == 503
    assert response["Retry-After"] == str(outage.RETRY_AFTER_S)
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert 'data-error-page="503"' in page and "cannot reach its database" in page
    assert f'http-equiv="refresh" content="{outage.RETRY_AFTER_S}"' in page
    assert "Traceback" not in caplog.text and "database unreachable" in caplog.text


def test_a_script_calling_a_console_url_in_an_outage_gets_the_json_error(client, owner):
    client.force_login(owner)
    with database_down():
        response = client.get("/", HTTP_ACCEPT="application/json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "database_unavailable"


def test_an_mcp_call_in_an_outage_answers_with_its_own_id(asgi_server, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(protocol, "authenticate_remembered", refuse)
    message = {"jsonrpc": "2.0", "id": "call-7", "method": "tools/list"}
    response = httpx.post(
        asgi_server.url + protocol.MCP_PATH,
        json=message,
        headers={"Authorization": "Bearer osf_pat_unknown"},
    )
    assert response.status_code == 503
    assert response.headers["retry-after"] == str(outage.RETRY_AFTER_S)
    answer = response.json()
    assert answer["id"] == "call-7"
    assert answer["error"]["data"]["error"]["code"] == "database_unavailable"
