"""System checks a server must pass before it serves: osfoundry/asgi.py runs them when the ASGI
server starts (the lifespan start-up), and the server exits with their message instead of
serving.

They are deployment checks (`manage.py check --deploy` lists them too), so that `migrate`,
`makemigrations --check` and `collectstatic` itself still run on a tree whose static files were
not collected yet.
"""

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin
from django.core import checks
from django.core.files.storage import storages

COLLECT = "manage.py collectstatic --noinput"


@checks.register(checks.Tags.staticfiles, deploy=True)
def static_files_collected(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """With the manifest storage and DEBUG off, every {% static %} looks its file up in
    staticfiles.json; without it every page would answer 500. (With DEBUG on, the storage
    serves plain names.)"""
    storage = storages.create_storage(settings.STORAGES["staticfiles"])
    if settings.DEBUG or not isinstance(storage, ManifestFilesMixin):
        return []
    if storage.manifest_storage.exists(storage.manifest_name):
        return []
    location = storage.manifest_storage.path(storage.manifest_name)
    return [
        checks.Error(
            f"Static files were never collected: {location} is missing, so every page would "
            "answer 500 (Missing staticfiles manifest entry).",
            hint=f"Run `{COLLECT}` before starting the server (make run does), or set "
            "STATIC_MANIFEST=0 to serve static files by their plain names.",
            id="osfoundry.E001",
        )
    ]


def start_up_problems() -> str:
    """What a server must not start with, with the fix for each; "" when all is well."""
    serious = [
        message
        for message in checks.run_checks(
            tags=[checks.Tags.staticfiles], include_deployment_checks=True
        )
        if message.is_serious()
    ]
    return "\n".join(f"{message.msg}\n  {message.hint}" for message in serious)
