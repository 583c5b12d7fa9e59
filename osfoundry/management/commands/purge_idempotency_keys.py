from django.conf import settings
from django.core.management.base import BaseCommand

from osfoundry.idempotency import purge_expired_keys


class Command(BaseCommand):
    help = "Forget idempotency keys (proposals, message sends) older than IDEMPOTENCY_KEY_DAYS."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=settings.IDEMPOTENCY_KEY_DAYS)

    def handle(self, *args, days, **options):
        deleted = purge_expired_keys(older_than_days=days)
        counts = ", ".join(f"{count} {name}(s)" for name, count in deleted.items())
        self.stdout.write(f"Purged idempotency keys older than {days} days: {counts}.")
