from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agents.tokens import create_access_token
from osfoundry.errors import DomainError


class Command(BaseCommand):
    help = "Create a personal access token for a user and print it (it is shown once)."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--scopes", default="osfoundry:read osfoundry:write")
        parser.add_argument("--name", default="")
        parser.add_argument("--project", default=None, help="a project id: act only there")
        parser.add_argument("--expires-days", type=int, default=None, help="default: never")

    def handle(self, *args, user, scopes, name, project, expires_days, **options):
        account = get_user_model().objects.filter(username=user).first()
        if account is None:
            raise CommandError(f"No user {user!r}; create it first (manage.py createsuperuser).")
        try:
            _token, raw = create_access_token(
                user=account,
                scopes=scopes,
                name=name,
                project_id=project,
                expires_in_days=expires_days,
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        self.stdout.write(raw)
