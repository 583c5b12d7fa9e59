"""`manage.py seed_demo`: a demo in which the owner's first login shows the product working.

The owner's own two agents (two tokens of the owner, each with a handle) have proposed apps to
Team Falcon and talk about them in a channel and a direct thread. Everything goes through the
services the REST API and the MCP tools call, as the agents' own tokens, with fixed idempotency
keys: a second run replays every call and stores nothing new.
"""

import json
import secrets
import subprocess
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from agents.management import demo
from agents.models import AccessToken
from agents.tokens import create_access_token, hash_token
from rooms.demo import standup_timer_files
from rooms.git.importing import import_repo_version
from rooms.git.repositories import create_repository
from rooms.git.store import DatabaseRefs
from rooms.models import Project, Repository, Room

CREDENTIALS = Path(settings.BASE_DIR) / "var" / "demo-credentials.json"
READ_WRITE, READ_ONLY = "osfoundry:read osfoundry:write", "osfoundry:read"


class Command(BaseCommand):
    help = "Create (or refresh) the demo project, Rooms, users, agents and their work. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--origin",
            default="",
            help="where the server answers, for the printed lines (default: PUBLIC_ORIGIN, "
            "else http://127.0.0.1:8000)",
        )

    def handle(self, *args, json: bool = False, origin: str = "", **options):
        saved = load_credentials()
        tokens = saved.get("agent_tokens", {})
        origin = (origin or settings.PUBLIC_ORIGIN or "http://127.0.0.1:8000").rstrip("/")
        with transaction.atomic():
            admin, admin_pw = ensure_user("admin", saved.get("admin"), email="admin@example.com")
            admin.is_staff = admin.is_superuser = True
            admin.save(update_fields=["is_staff", "is_superuser"])
            owner, owner_pw = ensure_user("owner", saved.get("owner"), email="owner@example.com")
            member, member_pw = ensure_user(
                "member", saved.get("member"), email="member@example.com"
            )
            project, _ = Project.objects.get_or_create(name="Demo")
            project.members.add(owner, member)
            room, _ = Room.objects.get_or_create(
                project=project, name="Team Falcon", defaults={"owner": owner}
            )
            room.members.add(member)
            local, _ = Room.objects.get_or_create(
                project=project,
                name="Owner's desk",
                defaults={"owner": owner, "kind": Room.Kind.LOCAL},
            )
            repository = Repository.objects.filter(project=project, name="standup-timer").first()
            if repository is None:  # made as a first push makes it: HEAD names main
                repository = create_repository(
                    project=project, name="standup-timer", created_by=None
                )
            # The owner's own agents: Claude Code builds, Codex plans (the names bylines show).
            write = ensure_token(owner, tokens.get("write"), "Claude Code (demo)", READ_WRITE)
            planner = ensure_token(owner, tokens.get("planner"), "Codex (demo)", READ_WRITE)
            read = ensure_token(owner, tokens.get("read"), "Read-only script (demo)", READ_ONLY)
        version = repository.versions.first() or import_demo_version(repository)
        serve_on_main(repository, version)
        team = demo.Team(
            builder=demo.connect_agent(write, demo.BUILDER),
            planner=demo.connect_agent(planner, demo.PLANNER),
            owner=owner,
        )
        work = demo.propose_work(team, room)
        talk = demo.converse(team, project)
        data = {
            "origin": origin,
            "pending_proposal_id": str(work.shuffle.pk) if work.shuffle.is_pending else None,
            "update_proposal_id": str(work.update.pk),
            "changes_requested_proposal_id": str(work.parking.pk),
            "project_id": str(project.pk),
            "room_id": str(room.pk),
            "local_room_id": str(local.pk),
            "repository_id": str(repository.pk),
            "version_id": str(version.pk),
            "channel_id": str(talk.channel.pk),
            "direct_thread_id": str(talk.direct_root.pk),
            "admin": {"username": "admin", "password": admin_pw},
            "owner": {"username": "owner", "password": owner_pw},
            "member": {"username": "member", "password": member_pw},
            "agent_tokens": {"write": write, "planner": planner, "read": read},
            "handles": {"write": team.builder.handle, "planner": team.planner.handle},
        }
        save_credentials(data)
        if json:
            self.stdout.write(dumps(data))
        else:
            self.stdout.write(describe(data, work))


def dumps(data) -> str:
    return json.dumps(data)


def load_credentials() -> dict:
    try:
        return json.loads(CREDENTIALS.read_text())
    except (FileNotFoundError, ValueError):
        return {}


def save_credentials(data: dict) -> None:
    CREDENTIALS.parent.mkdir(parents=True, exist_ok=True)
    CREDENTIALS.write_text(json.dumps(data, indent=2))
    CREDENTIALS.chmod(0o600)


def ensure_user(username, saved, *, email):
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"email": email})
    password = (saved or {}).get("password")
    if created or not password or not user.check_password(password):
        password = f"{username}-{secrets.token_hex(4)}"
        user.set_password(password)
        user.save()
    return user, password


def ensure_token(user, raw, name, scopes) -> str:
    # Reuse the saved token while it is still active, so a restart keeps agents connected.
    if raw and AccessToken.objects.active().filter(user=user, token_hash=hash_token(raw)).exists():
        return raw
    _token, raw = create_access_token(user=user, scopes=scopes, name=name)
    return raw


def import_demo_version(repository):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        for name, text in standup_timer_files().items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_text(text)
        env = {
            "GIT_AUTHOR_NAME": "osFoundry demo",
            "GIT_AUTHOR_EMAIL": "demo@example.com",
            "GIT_COMMITTER_NAME": "osFoundry demo",
            "GIT_COMMITTER_EMAIL": "demo@example.com",
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
        }
        for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "Standup timer"]):
            subprocess.run(["git", "-C", folder, *cmd], check=True, env=env, capture_output=True)
        version, _ = import_repo_version(repository=repository, path=path, ref="HEAD")
    return version


def serve_on_main(repository, version) -> None:
    """`git clone` of the demo repository checks out the pinned version: its commit on main (an
    imported commit gets no branch of its own). A branch an agent already moved stays."""
    refs = DatabaseRefs(repository.pk)
    if b"HEAD" not in refs.allkeys():  # a repository an earlier seed made
        refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    refs.add_if_new(b"refs/heads/main", version.commit_hash.encode())


# ---------------------------------------------------------------------------------------------
# What the owner reads in the terminal


def describe(data: dict, work: demo.Work) -> str:
    """Where to look first, then what to paste."""
    origin, token, handles = data["origin"], data["agent_tokens"]["write"], data["handles"]
    waiting = [
        f"                   {label:<42} {origin}/proposals/{proposal.pk}/"
        for proposal, label in (
            (work.update, "Standup timer (an update, shown as a diff)"),
            (work.shuffle, "Speaker shuffle (a new app)"),
        )
        if proposal.is_pending
    ]
    count = f"{len(waiting)} proposal{'s' if len(waiting) > 1 else ''}"
    return "\n".join(
        [
            "osFoundry demo is ready.",
            f"  Open first:    {origin}/ and log in as the owner"
            + (f": {count} wait for your review" if waiting else ""),
            *waiting,
            f"  Then:          {origin}/messages/channels/{data['channel_id']}/ : your agents "
            f"@{handles['planner']} and @{handles['write']} talk in #{demo.CHANNEL} (and in a "
            "direct thread beside it)",
            "  Sent back:     Parking lot (changes requested, with your line comment) "
            f"{origin}/proposals/{data['changes_requested_proposal_id']}/",
            f"  Owner login:   {data['owner']['username']} / {data['owner']['password']}",
            f"  Member login:  {data['member']['username']} / {data['member']['password']}",
            f"  Admin login:   {data['admin']['username']} / {data['admin']['password']}"
            f"  ({origin}/admin/)",
            f"  Room:          Team Falcon  room_id={data['room_id']}",
            f"  Local Room:    room_id={data['local_room_id']} (agents can't reach it)",
            f"  Agent tokens, the owner's: @{handles['write']} (read+write) {token}",
            f"                 @{handles['planner']} (read+write) "
            f"{data['agent_tokens']['planner']}",
            f"                 read only, no handle          {data['agent_tokens']['read']}",
            f"  Claude Code (as @{handles['write']}): claude mcp add --transport http osfoundry "
            f'{origin}/api/v1/mcp --header "Authorization: Bearer {token}"',
            f'  curl:          curl -s -H "Authorization: Bearer {token}" '
            f"{origin}/api/v1/rooms/{data['room_id']}/apps",
        ]
    )
