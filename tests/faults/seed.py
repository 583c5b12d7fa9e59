"""Seeds the fault tests' own database, in a process of its own (that database is not the one
pytest-django set up): a project, an owner, a Room, an agent that proposes, a sender and N
receivers, each agent with a token whose connection claimed its handle. Prints them as JSON.

    DATABASE_URL=postgres://... python -m tests.faults.seed --receivers 200 --tag abc123
"""

import argparse
import json
import os

import django


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receivers", type=int, default=1)
    parser.add_argument("--tag", required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "osfoundry.settings")
    django.setup()
    print(json.dumps(seed(args.tag, args.receivers)))


def seed(tag: str, receivers: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from agents.services import claim_connected_profile
    from agents.tokens import create_access_token
    from osfoundry.auth import authenticate_bearer
    from rooms.models import Project, Room

    users = get_user_model()
    project = Project.objects.create(name=f"Faults {tag}")
    password = make_password("pw-12345678")

    def user(name: str):
        made = users.objects.create(username=f"{name}-{tag}", password=password)
        project.members.add(made)
        return made

    def agent(name: str) -> str:
        raw = create_access_token(user=user(name), scopes="osfoundry:read osfoundry:write")[1]
        principal = authenticate_bearer(raw)
        claim_connected_profile(
            user=principal.user, connection_key=principal.token_key, handle=f"{name}-{tag}"
        )
        return raw

    owner = user("owner")
    proposer = agent("proposer")
    room = Room.objects.create(
        project=project, name=f"Room {tag}", kind=Room.Kind.CLOUD, owner=owner
    )
    room.members.add(users.objects.get(username=f"proposer-{tag}"))
    seeded = {
        "room_id": str(room.pk),
        "proposer": proposer,
        "sender": agent("sender"),
        "receivers": [{"handle": f"r{n}-{tag}", "token": agent(f"r{n}")} for n in range(receivers)],
    }
    return seeded


if __name__ == "__main__":
    main()
