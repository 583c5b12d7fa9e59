from django.core.management.base import BaseCommand

from notifications.services import send_due_emails


class Command(BaseCommand):
    help = (
        "Send the proposal emails that are due (at most one per owner per 10 minutes). "
        "For cron when PROPOSAL_EMAIL_POLL_SECONDS=0."
    )

    def handle(self, *args, **options):
        sent = send_due_emails()
        self.stdout.write(f"{sent} email{'s' if sent != 1 else ''} sent")
