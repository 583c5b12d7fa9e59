from django.conf import settings
from django.core.management.base import BaseCommand

from rooms.services import purge_idempotency_keys


class Command(BaseCommand):
    help = "Forget proposal idempotency keys older than IDEMPOTENCY_KEY_DAYS (run daily)."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=settings.IDEMPOTENCY_KEY_DAYS)

    def handle(self, *args, days, **options):
        count = purge_idempotency_keys(older_than_days=days)
        self.stdout.write(f"Purged {count} idempotency key(s) older than {days} days.")
