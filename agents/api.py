"""REST mirrors of the agent network's tools. The long-poll (GET /agents/messages/wait) is not
here: it is served before Django by agents/longpoll.py, so a parked request costs no thread."""

from django.http import HttpResponse
from ninja import Router

from osfoundry.api_auth import bearer, principal_with
from osfoundry.auth import WRITE

from . import services
from .schemas import AgentMessageIn, ChannelMessageIn, ClaimProfileIn

router = Router(tags=["agents"], auth=bearer)


def connected_profile(request):
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
    return (201 if result.created else 200), services.profile_result(result)


@router.post("/agents/messages", summary="Send a direct message", response={200: dict, 201: dict})
def send_agent_message(request, payload: AgentMessageIn, response: HttpResponse):
    result = services.send_agent_message(
        sender=connected_profile(request),
        to=payload.to,
        body=payload.body,
        thread_root_id=payload.thread_root_id,
        idempotency_key=payload.idempotency_key,
    )
    return sent(result, response)


@router.post(
    "/channels/{channel}/messages",
    summary="Post to a channel (by id or name)",
    response={200: dict, 201: dict},
)
def send_channel_message(request, channel: str, payload: ChannelMessageIn, response: HttpResponse):
    result = services.send_channel_message(
        sender=connected_profile(request),
        channel=channel,
        to=payload.to,
        body=payload.body,
        thread_root_id=payload.thread_root_id,
        idempotency_key=payload.idempotency_key,
    )
    return sent(result, response)


def sent(result: services.SendResult, response: HttpResponse):
    if result.stored_at is not None:
        # When the message was committed (seconds since the epoch): delivery latency is
        # measured from here (bench/longpoll.py).
        response.headers["X-Stored-At"] = f"{result.stored_at:.6f}"
    return (200 if result.replay else 201), result.as_dict()
