from django.core.mail.backends.base import BaseEmailBackend


class FailingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("SMTP server unreachable")
