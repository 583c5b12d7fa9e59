from django.core.management.base import BaseCommand, CommandError

from osfoundry.errors import DomainError
from rooms.git.importing import import_repo_version
from rooms.models import Repository


class Command(BaseCommand):
    help = "Pin a commit of a local git repository as an immutable repository version."

    def add_arguments(self, parser):
        parser.add_argument("path", help="a local git repository")
        parser.add_argument("--repository", required=True, help="repository name")
        parser.add_argument("--project", help="project name, when the name is not unique")
        parser.add_argument("--ref", default="HEAD")

    def handle(self, *args, path, repository, project, ref, **options):
        repos = Repository.objects.filter(name=repository)
        if project:
            repos = repos.filter(project__name=project)
        if repos.count() != 1:
            found = "no" if not repos.exists() else "several"
            raise CommandError(
                f"{found} repository named {repository!r}; create it in admin or pass --project"
            )
        try:
            version, created = import_repo_version(repository=repos.get(), path=path, ref=ref)
        except DomainError as error:
            raise CommandError(error.message) from None
        verb = "Imported" if created else "Already imported"
        self.stdout.write(f"{verb} {version} as version {version.pk} ({len(version.files)} files)")
