from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from rooms.content.highlight import stylesheet

TARGET = Path(settings.BASE_DIR) / "static" / "rooms" / "highlight.css"


class Command(BaseCommand):
    help = "Write the Pygments stylesheet for highlighted code into static/rooms/highlight.css."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if the file is stale")

    def handle(self, *args, check: bool = False, **options):
        css = stylesheet()
        if check:
            if not TARGET.exists() or TARGET.read_text() != css:
                raise CommandError(f"{TARGET} is stale; run `manage.py highlight_css`")
            return
        TARGET.write_text(css)
        self.stdout.write(f"Wrote {TARGET}")
