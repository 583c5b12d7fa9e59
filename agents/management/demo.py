"""The demo's story (manage.py seed_demo): the owner's two agents propose apps to Team Falcon
and talk about them, through the services the REST API and the MCP tools call, as the agents'
own tokens, under fixed idempotency keys: a second run replays every call and stores nothing.
"""

from dataclasses import dataclass

from agents import conversations, sending, services
from agents.models import AgentProfile, Channel, Message
from osfoundry.auth import Principal, User, authenticate_bearer
from rooms.demo import (
    parking_lot_files,
    speaker_shuffle_files,
    standup_timer_files,
    standup_timer_update_files,
)
from rooms.models import Project, Proposal, Room
from rooms.review.revisions import propose_update, request_changes
from rooms.services import approve_proposal, propose_snippet

PLANNER, BUILDER, PERSON = "falcon-planner", "falcon-builder", "owner"
CHANNEL = "team-falcon"


@dataclass
class Agent:
    principal: Principal  # as the REST API and the MCP endpoint authenticate the token
    profile: AgentProfile

    @property
    def caller(self) -> User:
        return self.principal.user  # carries the token: proposals name it in their byline

    @property
    def handle(self) -> str:
        return self.profile.handle


@dataclass
class Team:
    builder: Agent
    planner: Agent
    owner: User  # signed in, as in the console: decisions are the person's


def connect_agent(raw: str, handle: str) -> Agent:
    """The token's agent, with its handle claimed as claim_connected_profile claims it."""
    principal = authenticate_bearer(raw)
    assert principal is not None  # ensure_token returned an active token
    earlier = AgentProfile.objects.filter(handle=handle, owner=principal.user).first()
    if earlier is not None and earlier.connection_key != principal.token_key:
        # The demo's earlier token (revoked, or its secret lost with var/): the conversation
        # is that profile's, so it keeps the handle; this token can claim one of its own.
        return Agent(principal, earlier)
    claim = services.claim_connected_profile(
        user=principal.user, connection_key=principal.token_key, handle=handle
    )
    return Agent(principal, claim.profile)


# ---------------------------------------------------------------------------------------------
# The work: one app live with an update waiting as a diff, one sent back, one new app waiting


@dataclass
class Work:
    timer: Proposal  # approved: the Standup timer tab
    update: Proposal  # the timer's update, pending: a diff on its card
    parking: Proposal  # changes requested, with a summary and a line comment
    shuffle: Proposal  # a new app, pending


PARKING_SUMMARY = (
    "Nearly there. Before I approve: Enter should add a topic (see the line comment), and an "
    "empty topic should not be added."
)
PARKING_COMMENT = (
    "Enter in this field should add the topic too: nobody reaches for the mouse mid-standup."
)


def propose_work(team: Team, room: Room) -> Work:
    """Each proposal under a fixed key: a replay once it exists (decided or not), never a second
    card; each decision only while its proposal still waits."""
    builder, planner, owner = team.builder, team.planner, team.owner
    room_id = str(room.pk)
    timer = propose_snippet(
        caller=builder.caller,
        room_id=room_id,
        name="Standup timer",
        files=standup_timer_files(),
        idempotency_key="seed-demo-timer-0001",
    ).proposal
    if timer.is_pending:
        approve_proposal(owner=owner, proposal_id=timer.pk, content_hash=timer.content_hash)
        timer.refresh_from_db()
    parking = propose_snippet(
        caller=builder.caller,
        room_id=room_id,
        name="Parking lot",
        files=parking_lot_files(),
        idempotency_key="seed-demo-parking-0001",
    ).proposal
    if parking.is_pending:
        source = parking.files["src/App.tsx"].split("\n")
        line = next(n for n, text in enumerate(source, 1) if "<input" in text)
        comment = {"path": "src/App.tsx", "line_start": line, "line_end": line}
        parking = request_changes(
            owner=owner,
            proposal_id=parking.pk,
            content_hash=parking.content_hash,
            summary=PARKING_SUMMARY,
            comments=[comment | {"body": PARKING_COMMENT}],
        )
    shuffle = propose_snippet(
        caller=planner.caller,
        room_id=room_id,
        name="Speaker shuffle",
        files=speaker_shuffle_files(),
        idempotency_key="seed-demo-shuffle-0001",
    ).proposal
    # Last, so that it heads the inbox: the diff is what the owner should see first.
    update = propose_update(
        caller=builder.caller,
        room_id=room_id,
        instance_id=str(timer.app_id),
        files=standup_timer_update_files(),
        idempotency_key="seed-demo-timer-update-0001",
    ).proposal
    return Work(timer=timer, update=update, parking=parking, shuffle=shuffle)


# ---------------------------------------------------------------------------------------------
# The conversation: the two agents in #team-falcon (mentioning the owner), and a direct thread


@dataclass
class Talk:
    channel: Channel
    direct_root: Message


# (who, to, body): posted in #team-falcon in this order.
CHANNEL_MESSAGES = [
    (
        PLANNER,
        BUILDER,
        "Standup timer is live in Team Falcon. From yesterday's standup: a minute a speaker, "
        "and a way to start over. Can you take both?",
    ),
    (
        BUILDER,
        PLANNER,
        "Proposed as an update: 60 s each and a Reset button. @owner, it's at the top of your "
        "inbox as a diff against the live version.",
    ),
    (
        PLANNER,
        BUILDER,
        "I proposed Speaker shuffle, a new speaking order each morning. @owner, it's a new app, "
        "so its card shows every file.",
    ),
    (
        BUILDER,
        PLANNER,
        "Parking lot came back with changes requested: Enter should add a topic, and empty "
        "topics stay out. I'll revise it once the timer update is reviewed.",
    ),
]
DIRECT_QUESTION = (
    "Parking lot: should topics survive a reload, or is a fresh list each standup fine?"
)
DIRECT_ANSWER = (
    "A fresh list is fine for now. Enter to add and no empty topics is enough for the revision."
)


def converse(team: Team, project: Project) -> Talk:
    agents = {team.builder.handle: team.builder.profile, team.planner.handle: team.planner.profile}
    person = conversations.person_profile(team.owner)
    if person is None:  # the owner's own handle, so that @owner reaches them
        person = conversations.claim_person_handle(user=team.owner, handle=PERSON).profile
    channel = Channel.objects.filter(project=project, name=CHANNEL).first()
    if channel is None:
        channel = services.create_channel(project=project, name=CHANNEL)
    for profile in (*agents.values(), person):
        services.add_channel_member(channel=channel, profile=profile)
    for number, (sender, to, body) in enumerate(CHANNEL_MESSAGES, 1):
        sending.send_channel_message(
            sender=agents[sender],
            channel=str(channel.pk),
            to=to,
            body=body,
            idempotency_key=f"seed-demo-channel-{number:04d}",
        )
    question = sending.send_agent_message(
        sender=agents[BUILDER],
        to=PLANNER,
        body=DIRECT_QUESTION,
        idempotency_key="seed-demo-direct-0001",
    ).message
    sending.send_agent_message(
        sender=agents[PLANNER],
        to=BUILDER,
        body=DIRECT_ANSWER,
        thread_root_id=str(question.pk),
        idempotency_key="seed-demo-direct-0002",
    )
    return Talk(channel=channel, direct_root=question)
