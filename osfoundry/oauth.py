"""The OAuth authorization server for MCP clients, on django-allauth's identity provider.

allauth brings the endpoints, PKCE, dynamic client registration (RFC 7591) and resource
indicators (RFC 8707). This adapter adds what MCP needs on top: registered clients get the
osfoundry scopes, the only resource a token may be bound to is the MCP endpoint, the issuer is
PUBLIC_ORIGIN when set, and the discovery document lists our scopes.
"""

from allauth.idp.oidc.adapter import DefaultOIDCAdapter
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from osfoundry.auth import READ, SCOPES, WRITE
from osfoundry.mcp.protocol import PATH as MCP_PATH

OIDC_SCOPES = ("openid", "profile", "email")


def mcp_resource(origin: str) -> str:
    return origin.rstrip("/") + MCP_PATH


class OAuthAdapter(DefaultOIDCAdapter):
    scope_display = {
        **DefaultOIDCAdapter.scope_display,
        READ: _("Read the Rooms you belong to, their apps and events"),
        WRITE: _("Propose apps to your Rooms (owners approve each one) and send messages"),
    }

    def get_issuer(self) -> str:
        return settings.PUBLIC_ORIGIN or super().get_issuer()

    def validate_client_registration(self, *, client, client_metadata, **kwargs) -> None:
        # Open registration, as MCP clients expect: each client may ask for our two scopes
        # (and the OpenID ones); a client that names no scope gets ours by default.
        requested = set(client.get_scopes())
        client.set_scopes([s for s in (*OIDC_SCOPES, *SCOPES) if s in requested | set(SCOPES)])
        client.set_default_scopes(list(SCOPES))

    def validate_resource_uris(self, *, uris: list[str], **kwargs) -> None:
        allowed = mcp_resource(self.get_issuer())
        for uri in uris:
            if uri.rstrip("/") != allowed:
                raise ValidationError(
                    f"Unknown resource {uri!r}: this server issues tokens only for {allowed}"
                )

    def populate_server_metadata(self, data: dict) -> None:
        data["scopes_supported"] = [*SCOPES, *OIDC_SCOPES]
        data["code_challenge_methods_supported"] = ["S256"]
