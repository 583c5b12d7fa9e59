"""Client ID Metadata Documents (MCP 2026-07-28; draft-ietf-oauth-client-id-metadata-document-01):
an MCP client names itself by the https URL of a JSON document that describes it, instead of
registering. The authorization endpoint (osfoundry/oauth_views.py) calls this before allauth
looks the client up, so allauth finds a stored client like any other.

allauth 65.22 has its own (IDP_OIDC_CIMD_ENABLED, allauth/idp/oidc/internal/cimd.py), left off:
it fetches with `requests`, checking no address (127.0.0.1, 10.x and 169.254.169.254 are
fetched), with a per-read timeout a server sending a byte at a time can stretch without end,
and a cache lifetime that ignores Cache-Control; a failed fetch is logged and answered as an
unknown client, and a document's redirect URIs and name escape the rules registration follows.
We keep its storage: a document becomes the allauth Client whose id is its URL, the document in
`data["client_metadata"]` (where allauth reads post-logout URIs), so tokens, grants and
Connected apps treat it as any other client. The fetch is osfoundry/oauth_fetch.py's.
"""

import json
import re
from datetime import timedelta
from typing import Literal
from urllib.parse import urlsplit

from allauth.idp.oidc.models import Client
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from osfoundry.errors import describe_validation_error
from osfoundry.oauth import grant_our_scopes, redirect_destination, redirect_uris_problem
from osfoundry.oauth_fetch import FetchRefused, fetch_public_https, shown
from osfoundry.text import one_line_problems

# How long a fetched document is used before it is fetched again: its Cache-Control, within
# bounds. At least a minute, so a reload or a client's retry is not a fetch; at most a day, so a
# document its owner changed or withdrew is read again within one; ten minutes without a word.
FRESH_AT_LEAST = 60
FRESH_AT_MOST = 24 * 3600
FRESH_BY_DEFAULT = 600

# The longest id allauth's Client can store.
MAX_CLIENT_ID = Client._meta.get_field("id").max_length or 100
MAX_CLIENT_NAME = Client._meta.get_field("name").max_length or 100

# A path's "." and ".." segments, percent-encoded or not (RFC 3986 §6.2.2.2).
DOT_SEGMENTS = frozenset({".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})

# Loopback redirect URIs with ports admitted from one document (admit_loopback_redirect).
MAX_ADMITTED = 20


class DocumentRefused(Exception):
    """The document at `url` cannot be used, and why: a sentence for the page that says so."""

    def __init__(self, url: str, reason: str):
        super().__init__(
            f"The app's client ID metadata document {shown(url)} cannot be used: {reason}."
        )


class ClientMetadataDocument(BaseModel):
    """What osFoundry reads of a document (RFC 7591 names); other fields are the client's own."""

    model_config = ConfigDict(extra="allow", strict=True)

    client_id: str
    client_name: str | None = Field(default=None, max_length=MAX_CLIENT_NAME)
    redirect_uris: list[str] = Field(min_length=1)
    post_logout_redirect_uris: list[str] = []
    grant_types: list[Literal["authorization_code", "refresh_token"]] = ["authorization_code"]
    response_types: list[Literal["code"]] = ["code"]
    # A document is public: no secret can be shared through it (the draft, section 4.1).
    token_endpoint_auth_method: Literal["none"] = "none"
    client_secret: None = None
    scope: str = ""


def names_a_document(client_id: str) -> bool:
    """Whether `client_id` is a URL, so a document's, not an id this server generated (allauth's
    are random letters and digits)."""
    return re.match(r"https?://", client_id, flags=re.IGNORECASE) is not None


def client_id_problem(client_id: str) -> str | None:
    """The rule the URL breaks as a document's address (the draft, section 3), or None."""
    if not client_id.startswith("https://"):
        return "it must be an https URL"
    if len(client_id) > MAX_CLIENT_ID:
        return (
            f"it is longer than {MAX_CLIENT_ID} characters, the longest client ID osFoundry stores"
        )
    if not (client_id.isascii() and client_id.isprintable()) or " " in client_id:
        return "it must be written in printable ASCII without spaces (a host in punycode)"
    parts = urlsplit(client_id)
    try:
        parts.port  # noqa: B018 -- raises ValueError for a port that is not one
    except ValueError:
        return "its port must be a number from 1 to 65535"
    if "@" in parts.netloc:
        return "it must not contain a user name or password"
    if not parts.hostname:
        return "it must name a host"
    if parts.netloc != parts.netloc.lower():
        return "its host must be written in lower case"
    if parts.path in ("", "/"):
        return "it must have a path, as in https://app.example/client.json"
    if DOT_SEGMENTS & set(parts.path.lower().split("/")):
        return "its path must not contain . or .. segments"
    if parts.query or "?" in client_id:
        return "it must not have a query string"
    if "#" in client_id:
        return "it must not have a #fragment"
    return None


def is_document_client(client: Client) -> bool:
    return isinstance(client.data, dict) and client.data.get("cimd") is True


def current_client(client_id: str) -> Client | None:
    """The stored client for `client_id` when no fetch is needed: one an admin registered under
    this URL (the draft's pre-registration), or a document fetched and still fresh."""
    client = Client.objects.filter(id=client_id).first()
    if client is None or not is_document_client(client):
        return client
    if not settings.OAUTH_CLIENT_METADATA_DOCUMENTS:
        return None
    fresh_until = parse_datetime(str(client.data.get("fresh_until") or ""))
    if fresh_until is None or fresh_until <= timezone.now():
        return None
    return client


def fetch_client(*, client_id: str) -> Client:
    """Fetch the document at `client_id`, check it and store it as the client: DocumentRefused
    says why it cannot be used. Nothing is stored of a refused document (the draft: never cache
    an error)."""
    if not settings.OAUTH_CLIENT_METADATA_DOCUMENTS:
        raise DocumentRefused(
            client_id, "this server accepts no client ID metadata documents; the app may register"
        )
    problem = client_id_problem(client_id)
    if problem is not None:
        raise DocumentRefused(client_id, problem)
    try:
        answer = fetch_public_https(
            client_id,
            max_bytes=settings.OAUTH_CLIENT_METADATA_MAX_BYTES,
            seconds=settings.OAUTH_CLIENT_METADATA_FETCH_SECONDS,
            allow_loopback=settings.OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK,
        )
    except FetchRefused as refused:
        raise DocumentRefused(client_id, str(refused)) from None
    if answer.status != 200:
        raise DocumentRefused(client_id, f"it answered HTTP {answer.status}, not 200")
    document = read_document(client_id, answer.body)
    return store_client(
        client_id=client_id,
        document=document,
        fresh_for=freshness(answer.headers.get("Cache-Control")),
    )


def read_document(client_id: str, body: bytes) -> ClientMetadataDocument:
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        raise DocumentRefused(client_id, "it is not JSON") from None
    if not isinstance(raw, dict):
        raise DocumentRefused(client_id, "it is not a JSON object")
    if raw.get("client_id") != client_id:
        found = shown(repr(raw.get("client_id")))
        raise DocumentRefused(
            client_id, f"its client_id is {found}, not the URL it was fetched from"
        )
    try:
        document = ClientMetadataDocument.model_validate(raw)
    except ValidationError as error:
        raise DocumentRefused(client_id, describe_validation_error(error).message) from None
    problems = [
        redirect_uris_problem(field="redirect_uris", uris=document.redirect_uris),
        redirect_uris_problem(
            field="post_logout_redirect_uris", uris=document.post_logout_redirect_uris
        ),
        *one_line_problems(document.client_name or "", field="client_name", what="client name"),
    ]
    found_problems = [problem for problem in problems if problem]
    if found_problems:
        raise DocumentRefused(client_id, "; ".join(found_problems))
    return document


def freshness(cache_control: str | None) -> timedelta:
    """How long a document may be used, from its Cache-Control (RFC 9111: s-maxage, as a cache
    many people share, else max-age; no-store and no-cache as zero), within the bounds above."""
    directives = {}
    for directive in (cache_control or "").split(","):
        name, _, value = directive.partition("=")
        directives[name.strip().lower()] = value.strip().strip('"')
    if "no-store" in directives or "no-cache" in directives:
        seconds = 0
    else:
        given = directives.get("s-maxage") or directives.get("max-age") or ""
        seconds = int(given) if given.isdigit() else FRESH_BY_DEFAULT
    return timedelta(seconds=min(max(seconds, FRESH_AT_LEAST), FRESH_AT_MOST))


def store_client(*, client_id: str, document: ClientMetadataDocument, fresh_for) -> Client:
    now = timezone.now()
    with transaction.atomic():
        client = Client.objects.select_for_update().filter(id=client_id).first()
        if client is None:
            client = Client(id=client_id, type=Client.Type.PUBLIC)
        # Ports admitted for a loopback URI the new document still lists stay admitted: a
        # person may be between the consent page and Connect.
        admitted = [
            uri
            for uri in (client.data or {}).get("admitted_redirect_uris", [])
            if matching_loopback_uri(uri, document.redirect_uris)
        ]
        client.name = document.client_name or ""
        client.type = Client.Type.PUBLIC
        client.set_redirect_uris([*document.redirect_uris, *admitted])
        client.set_grant_types(list(document.grant_types))
        client.set_response_types(list(document.response_types))
        grant_our_scopes(client, requested=document.scope.split())
        client.data = {
            "cimd": True,
            "client_metadata": document.model_dump(mode="json"),
            "updated_at": int(now.timestamp()),
            "fresh_until": (now + fresh_for).isoformat(),
            "admitted_redirect_uris": admitted,
        }
        client.save()
    return client


def matching_loopback_uri(uri: str, listed: list[str]) -> str | None:
    """The URI of `listed` that `uri` matches as a loopback redirect URI on any port (RFC 8252
    §7.3: the same scheme, host, path and query), or None."""
    parts = urlsplit(uri)
    for candidate in listed:
        other = urlsplit(candidate)
        if (
            parts.scheme == other.scheme == "http"
            and parts.hostname == other.hostname == "localhost"
            and (parts.path, parts.query) == (other.path, other.query)
        ):
            return candidate
    return None


def admit_loopback_redirect(*, client: Client, redirect_uri: str) -> None:
    """Let a document's `http://localhost/callback` take `redirect_uri` on the port the client
    chose at run time (`http://localhost:53412/callback`), as RFC 8252 §7.3 asks.

    allauth allows any port on 127.0.0.1 and [::1] alone, and a document, written once, names
    no port: Claude Code's lists http://localhost/callback and sends its own port. The URI is
    added to the stored client's redirect URIs, where allauth looks for it here and at Connect;
    the last MAX_ADMITTED are kept until the document is fetched again."""
    if not is_document_client(client) or redirect_uri in client.get_redirect_uris():
        return
    document_uris = client.data["client_metadata"].get("redirect_uris", [])
    if matching_loopback_uri(redirect_uri, document_uris) is None:
        return
    with transaction.atomic():
        locked = Client.objects.select_for_update().get(pk=client.pk)
        previous = locked.data.get("admitted_redirect_uris", [])
        admitted = [redirect_uri, *(uri for uri in previous if uri != redirect_uri)]
        admitted = admitted[:MAX_ADMITTED]
        locked.data["admitted_redirect_uris"] = admitted
        locked.set_redirect_uris([*document_uris, *admitted])
        locked.save(update_fields=["data", "redirect_uris"])


def document_host(client: Client) -> str | None:
    """The host that published `client`'s document, as the consent page names it (punycode,
    its port when it has one), or None for a registered client."""
    if not is_document_client(client):
        return None
    return redirect_destination(client.id).host
