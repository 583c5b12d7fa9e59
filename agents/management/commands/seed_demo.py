import json
import secrets
import subprocess
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from agents.models import AccessToken
from agents.tokens import create_access_token, hash_token
from rooms.demo import standup_timer_files
from rooms.gitimport import import_repo_version
from rooms.models import Project, Repository, Room
from rooms.services import propose_snippet

CREDENTIALS = Path(settings.BASE_DIR) / "var" / "demo-credentials.json"


class Command(BaseCommand):
    help = "Create (or refresh) the demo project, Rooms, users and agent tokens. Idempotent."

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
        origin = (origin or settings.PUBLIC_ORIGIN or "http://127.0.0.1:8000").rstrip("/")
        with transaction.atomic():
            admin, admin_pw = ensure_user("admin", saved.get("admin"), email="admin@example.com")
            admin.is_staff = admin.is_superuser = True
            admin.save(update_fields=["is_staff", "is_superuser"])
            owner, owner_pw = ensure_user("owner", saved.get("owner"), email="owner@example.com")
            member, member_pw = ensure_user(
                "member", saved.get("member"), email="member@example.com"
            )
            agent, _ = ensure_user("agent", None, email="agent@example.com", usable_password=False)
            project, _ = Project.objects.get_or_create(name="Demo")
            project.members.add(owner, member, agent)
            room, _ = Room.objects.get_or_create(
                project=project, name="Team Falcon", defaults={"owner": owner}
            )
            room.members.add(member, agent)
            local, _ = Room.objects.get_or_create(
                project=project,
                name="Owner's desk",
                defaults={"owner": owner, "kind": Room.Kind.LOCAL},
            )
            local.members.add(agent)
            repository, _ = Repository.objects.get_or_create(project=project, name="standup-timer")
            write = ensure_token(
                agent,
                saved.get("agent_tokens", {}).get("write"),
                "demo write",
                "osfoundry:read osfoundry:write",
            )
            read = ensure_token(
                agent, saved.get("agent_tokens", {}).get("read"), "demo read", "osfoundry:read"
            )
        version = repository.versions.first() or import_demo_version(repository)
        pending = propose_demo(agent, room)
        data = {
            "origin": origin,
            "pending_proposal_id": str(pending.pk) if pending.is_pending else None,
            "project_id": str(project.pk),
            "room_id": str(room.pk),
            "local_room_id": str(local.pk),
            "repository_id": str(repository.pk),
            "version_id": str(version.pk),
            "admin": {"username": "admin", "password": admin_pw},
            "owner": {"username": "owner", "password": owner_pw},
            "member": {"username": "member", "password": member_pw},
            "agent": {"username": "agent"},
            "agent_tokens": {"write": write, "read": read},
        }
        save_credentials(data)
        if json:
            self.stdout.write(dumps(data))
        else:
            self.stdout.write(describe(data))


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


def ensure_user(username, saved, *, email, usable_password=True):
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"email": email})
    if not usable_password:
        if created:
            user.set_unusable_password()
            user.save()
        return user, None
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


def propose_demo(agent, room):
    """One proposal waiting in the owner's inbox, so the first login has something to review.
    The same key every run: a replay once it exists (decided or not), never a second card."""
    files = standup_timer_files()
    files["src/App.tsx"] = files["src/App.tsx"].replace("Standup timer", "Standup timer (demo)")
    return propose_snippet(
        caller=agent,
        room_id=str(room.pk),
        name="Standup timer",
        files=files,
        idempotency_key="seed-demo-pending-0001",
    ).proposal


def describe(data: dict) -> str:
    origin, token = data["origin"], data["agent_tokens"]["write"]
    return "\n".join(
        [
            "osFoundry demo is ready.",
            f"  Open first:    {origin}/ and log in as the owner"
            + (
                f": a proposal waits for review ({origin}/proposals/{data['pending_proposal_id']}/)"
                if data["pending_proposal_id"]
                else ""
            ),
            f"  Owner login:   {data['owner']['username']} / {data['owner']['password']}",
            f"  Member login:  {data['member']['username']} / {data['member']['password']}",
            f"  Admin login:   {data['admin']['username']} / {data['admin']['password']}"
            f"  ({origin}/admin/)",
            f"  Room:          Team Falcon  room_id={data['room_id']}",
            f"  Local Room:    room_id={data['local_room_id']} (agents can't reach it)",
            f"  Agent token (read+write): {token}",
            f"  Agent token (read only):  {data['agent_tokens']['read']}",
            "  Claude Code:   claude mcp add --transport http osfoundry "
            f'{origin}/api/v1/mcp --header "Authorization: Bearer {token}"',
            f'  curl:          curl -s -H "Authorization: Bearer {token}" '
            f"{origin}/api/v1/rooms/{data['room_id']}/apps",
        ]
    )
