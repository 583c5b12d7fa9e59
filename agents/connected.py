"""What acts for a person: their personal tokens, the OAuth clients they connected, and the
agents (profiles) behind both. The console's Connected pages call these; every rule about who
may revoke or disconnect what is here.

A connection is named by its key (agents.tokens.connection_key, osfoundry.oauth.grant_key):
"pat:<token id>" or "oauth:<client id>:<user id>". A proposal records the key that sent it, and
`describe_connections` turns keys back into the agent's handle and the token's or client's name.
"""

from dataclasses import dataclass
from datetime import datetime

from allauth.idp.oidc.models import Client
from allauth.idp.oidc.models import Token as OAuthToken
from django.db import transaction
from django.db.models import Max, Min

from osfoundry.auth import User
from osfoundry.errors import NotFound
from osfoundry.oauth import grant_key, redirect_destination

from .models import AccessToken, AgentProfile, ClientGrant
from .tokens import connection_key, revoke_access_token

OAUTH_SUFFIX = " via OAuth"
GRANT_TYPES = (
    OAuthToken.Type.ACCESS_TOKEN,
    OAuthToken.Type.REFRESH_TOKEN,
    OAuthToken.Type.AUTHORIZATION_CODE,
)


def revoke_token_for_user(*, user: User, token_id) -> AccessToken:
    """Revoke one of `user`'s own tokens; another person's is "not found"."""
    token = AccessToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise NotFound(f"Token {token_id!r} not found", field="token_id")
    revoke_access_token(token=token)
    return token


@dataclass(frozen=True)
class ConnectedClient:
    client_id: str
    name: str  # as the client declared it at registration: unverified
    redirect_hosts: tuple[str, ...]
    scopes: tuple[str, ...]
    connected_at: datetime
    last_used_at: datetime  # its last call (to the 10 minutes), else when it last got a token
    project: str  # the project chosen on the consent page; "" for all


def connected_clients(*, user: User) -> list[ConnectedClient]:
    """The OAuth clients holding a live token of `user`, most recently used first."""
    rows = (
        OAuthToken.objects.valid()
        .filter(user=user, type__in=GRANT_TYPES, client__isnull=False)
        .values("client_id")
        .annotate(first=Min("created_at"), last=Max("created_at"))
        .order_by("-last")
    )
    clients = Client.objects.in_bulk([row["client_id"] for row in rows])
    grants = {
        grant.client_id: grant
        for grant in ClientGrant.objects.filter(user=user).select_related("project")
    }
    found = []
    for row in rows:
        client = clients[row["client_id"]]
        hosts = {redirect_destination(uri).host for uri in client.get_redirect_uris()}
        scopes = set().union(
            *(
                token.get_scopes()
                for token in OAuthToken.objects.valid().filter(user=user, client=client)
            )
        )
        found.append(
            ConnectedClient(
                client_id=client.id,
                name=client.name,
                redirect_hosts=tuple(sorted(hosts)),
                scopes=tuple(sorted(s for s in scopes if s.startswith("osfoundry:"))),
                connected_at=row["first"],
                last_used_at=last_used(grants.get(client.id)) or row["last"],
                project=confined_to(grants.get(client.id)),
            )
        )
    return found


def last_used(grant: ClientGrant | None) -> datetime | None:
    return grant.last_used_at if grant else None


def confined_to(grant: ClientGrant | None) -> str:
    """The project name an app is confined to; "" for all."""
    if grant is None or not grant.is_confined:
        return ""
    return grant.project.name if grant.project else "(a deleted project: nothing)"


@transaction.atomic
def disconnect_client(*, user: User, client_id: str) -> int:
    """End a client's access for `user`: every token and code it holds for them is deleted, so
    its next call is refused (401) and its long-polls end (agents.revocation). Returns how many
    went; a client with nothing left is "not found"."""
    tokens = OAuthToken.objects.filter(user=user, client_id=client_id)
    if not tokens.exists():
        raise NotFound(f"No connected app {client_id!r}", field="client_id")
    deleted, _ = tokens.delete()  # one by one, with signals: the revocation hooks run
    return deleted


@dataclass(frozen=True)
class Connection:
    name: str  # the token's or client's name, or "" when it is gone
    handle: str  # the agent's handle on the network, or ""


def handle_of_connection(key: str) -> str:
    """The handle the agent behind a connection key claimed; "" when it has none."""
    handle = AgentProfile.objects.filter(connection_key=key).values_list("handle", flat=True)
    return handle.first() or ""


def describe_connections(keys) -> dict[str, Connection]:
    """Each connection key's handle and name, in three queries whatever the number of keys."""
    keys = {key for key in keys if key}
    handles = dict(
        AgentProfile.objects.filter(connection_key__in=keys).values_list("connection_key", "handle")
    )
    names = {}
    token_ids = [key.removeprefix("pat:") for key in keys if key.startswith("pat:")]
    for token in AccessToken.objects.filter(pk__in=[i for i in token_ids if i.isdigit()]):
        names[connection_key(token)] = token.name or f"token {token.prefix}…"
    client_ids = {key.split(":")[1] for key in keys if key.startswith("oauth:")}
    for client in Client.objects.filter(id__in=client_ids):
        for key in keys:
            if key.startswith(f"oauth:{client.id}:"):
                names[key] = (client.name or "An unnamed app") + OAUTH_SUFFIX
    return {key: Connection(name=names.get(key, ""), handle=handles.get(key, "")) for key in keys}


def proposers(proposals) -> dict:
    """Who proposed each of `proposals`, as (who, via): the agent's handle (else the person's
    name, when the proposal came without a token or its agent is gone) and its token's or
    client's name (else "")."""
    proposals = list(proposals)
    connections = describe_connections(p.proposed_via for p in proposals)
    found = {}
    for proposal in proposals:
        connection = connections.get(proposal.proposed_via)
        who = connection.handle if connection and connection.handle else ""
        found[proposal.pk] = (
            who or proposal.proposed_by.get_username(),
            connection.name if connection else "",
        )
    return found


@dataclass(frozen=True)
class MyAgent:
    handle: str
    via: str  # the token's or client's name
    is_connected: bool  # its token or client still has access
    last_seen_at: datetime | None
    unread: int  # messages in its inbox it has not yet been handed


def my_agents(*, user: User) -> list[MyAgent]:
    profiles = list(AgentProfile.objects.filter(owner=user))
    names = describe_connections(profile.connection_key for profile in profiles)
    tokens = {connection_key(t): t for t in AccessToken.objects.filter(user=user)}
    grants = {
        grant_key(row["client_id"], user.pk): row["last"]
        for row in OAuthToken.objects.valid()
        .filter(user=user, type=OAuthToken.Type.ACCESS_TOKEN)
        .values("client_id")
        .annotate(last=Max("created_at"))
    }
    # A client's last call outlives its tokens: a disconnected agent was still seen.
    seen = {
        grant_key(grant.client_id, user.pk): grant.last_used_at
        for grant in ClientGrant.objects.filter(user=user, last_used_at__isnull=False)
    }
    agents = []
    for profile in profiles:
        key = profile.connection_key or ""
        token = tokens.get(key)
        agents.append(
            MyAgent(
                handle=profile.handle,
                via=names[key].name if key in names else "",
                is_connected=token.is_active if token else key in grants,
                last_seen_at=token.last_used_at if token else seen.get(key, grants.get(key)),
                unread=max(profile.last_inbox_sequence - profile.last_delivered_sequence, 0),
            )
        )
    return agents
