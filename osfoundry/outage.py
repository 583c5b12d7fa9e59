"""The database cannot be reached (stopped, restarting, failing over): every interface answers
503 with Retry-After and a JSON error, never a 500 or a traceback, and the client retries.

Nothing is half-written: a service that writes runs in one transaction, which the database
rolls back when the connection breaks. Once it is back, each worker reconnects on its own:
Django's request threads open a connection per request, and the kept connections of the async
routes' threads are checked before use (CONN_HEALTH_CHECKS, osfoundry/dbthreads.py).

Interfaces map it once each: the REST API (osfoundry/api.py), Django's other pages
(OutageMiddleware below, and handler500 for what fails outside a view), the REST long-poll
(agents/longpoll.py) and the MCP endpoint (osfoundry/mcp/protocol.py). A person's browser gets
a page that says so and reloads itself; everything else gets the JSON error.
"""

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.deprecation import MiddlewareMixin
from django.views.defaults import server_error as django_server_error

from .errors import DomainError

# psycopg's "connection refused", "server closed the connection unexpectedly", "terminating
# connection due to administrator command" (OperationalError); a connection Django already
# closed (InterfaceError). SQLite's "database is locked" is an OperationalError too: retrying
# later is the right answer to it as well.
DATABASE_OUTAGE = (OperationalError, InterfaceError)
RETRY_AFTER_S = 5

logger = logging.getLogger(__name__)


class DatabaseUnavailable(DomainError):
    code = "database_unavailable"
    http_status = 503

    def __init__(self):
        super().__init__(f"The database is unreachable for now; retry in {RETRY_AFTER_S} s")


def unavailable(exc: BaseException) -> DatabaseUnavailable:
    """The answer to a database outage, logged once, without the traceback."""
    logger.warning("database unreachable: %s", str(exc).strip().splitlines()[:1])
    return DatabaseUnavailable()


def retry_after_header() -> tuple[bytes, bytes]:
    return (b"retry-after", str(RETRY_AFTER_S).encode())


def outage_response(request: HttpRequest, exc: BaseException) -> HttpResponse:
    """The 503 for a page or an API call made while the database is unreachable."""
    error = unavailable(exc)
    response: HttpResponse
    if is_page_request(request):
        # Rendered without the request: its context processors would read the database.
        page = render_to_string("503.html", {"retry_after": RETRY_AFTER_S})
        response = HttpResponse(page, status=503)
    else:
        response = JsonResponse({"error": error.as_dict()}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response


def is_page_request(request: HttpRequest) -> bool:
    """A browser navigating to a console page, not a script calling an API."""
    accepts = request.headers.get("accept", "")
    return not request.path.startswith("/api/") and "text/html" in accepts


class OutageMiddleware(MiddlewareMixin):
    """A view that meets a database outage answers the 503 above. Caught here, the outage is
    logged in one line: Django's handler500 path logs a traceback first."""

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, DATABASE_OUTAGE):
            return outage_response(request, exception)
        return None


def server_error(request: HttpRequest):
    """handler500: a database outage outside a view (a middleware's read) is a 503 with
    Retry-After; anything else Django's 500."""
    exc = sys.exc_info()[1]
    if isinstance(exc, DATABASE_OUTAGE):
        return outage_response(request, exc)
    return django_server_error(request)
