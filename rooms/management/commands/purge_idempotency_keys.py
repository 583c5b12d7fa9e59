from django.conf import settings
from django.core.management.base import BaseCommand

from agents.services import purge_message_keys
from rooms.services import purge_idempotency_keys


class Command(BaseCommand):
    help = (
        "Forget proposal and message idempotency keys older than IDEMPOTENCY_KEY_DAYS (run daily)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=settings.IDEMPOTENCY_KEY_DAYS)

    def handle(self, *args, days, **options):
        proposals = purge_idempotency_keys(older_than_days=days)
        messages = purge_message_keys(older_than_days=days)
        self.stdout.write(
            f"Purged {proposals} proposal key(s) and {messages} message key(s) "
            f"older than {days} days."
        )
