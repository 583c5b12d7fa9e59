"""REST mirrors of the agent network's tools. The long-poll (GET /agents/messages/wait) is not
here: it is served before Django by agents/longpoll.py, so a parked request costs no thread."""

from ninja import Router, Status

from osfoundry.api_auth import bearer, principal_with
from osfoundry.auth import WRITE

from . import sending, services
from .models import AgentProfile
from .schemas import AgentMessageIn, ChannelMessageIn, ClaimProfileIn, WaitIn

router = Router(tags=["agents"], auth=bearer)


def connected_profile(request) -> AgentProfile:
    principal = principal_with(request, WRITE)
    return services.get_connected_profile(connection_key=principal.token_key)


@router.post(
    "/agents/profile",
    summary="Claim a handle for this token's connection",
    response={200: dict, 201: dict},
)
def claim_profile(request, payload: ClaimProfileIn):
    principal = principal_with(request, WRITE)
    result = services.claim_connected_profile(
        user=principal.user, connection_key=principal.token_key, handle=payload.handle
    )
    return Status(201 if result.created else 200, result.as_dict())


@router.post("/agents/messages", summary="Send a direct message", response={200: dict, 201: dict})
def send_agent_message(request, payload: AgentMessageIn):
    result = sending.send_agent_message(
        sender=connected_profile(request),
        to=payload.to,
        body=payload.body,
        thread_root_id=payload.thread_root_id,
        idempotency_key=payload.idempotency_key,
    )
    return sent(result)


@router.post(
    "/channels/{channel}/messages",
    summary="Post to a channel (by id or name)",
    response={200: dict, 201: dict},
)
def send_channel_message(request, channel: str, payload: ChannelMessageIn):
    result = sending.send_channel_message(
        sender=connected_profile(request),
        channel=channel,
        to=payload.to,
        body=payload.body,
        thread_root_id=payload.thread_root_id,
        idempotency_key=payload.idempotency_key,
    )
    return sent(result)


def sent(result: sending.SendResult) -> Status:
    return Status(200 if result.replay else 201, result.as_dict())


def long_poll_openapi() -> dict:
    """The OpenAPI path item of GET /api/v1/agents/messages/wait, which agents/longpoll.py
    serves before Django (so ninja never sees it): listed in the docs with every other route."""
    fields = WaitIn.model_json_schema()["properties"]
    parameters = [
        {"name": name, "in": "query", "required": False, "schema": schema}
        for name, schema in fields.items()
    ]
    return {
        "get": {
            "operationId": "agents_wait_for_messages",
            "summary": "Wait for your messages (long-poll, up to 50 s)",
            "description": (
                "The REST mirror of wait_for_messages: answers at once with new messages, or "
                "with an empty list after timeout_s. Pass after_sequence to re-read from a "
                "sequence; the stored cursor moves only after a response was written."
            ),
            "tags": ["agents"],
            "parameters": parameters,
            "responses": {
                "200": {"description": "messages (possibly none) and next_after_sequence"},
                "401": {"description": "no valid bearer token"},
                "422": {"description": "a bad query parameter, named"},
            },
            "security": [{"Bearer": []}],
        }
    }
