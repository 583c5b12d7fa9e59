"""Repositories of a project: their git objects and refs, and the versions pinned from them.

Everything a repository holds lives in the database, so every worker and host serves the same
repositories (rooms/git/store.py reads and writes them for dulwich). Objects are never deleted:
a pinned version stays fetchable after a force-push moves its branch.
"""

import uuid

from django.conf import settings
from django.db import models

from .verdictmodels import StoredVerdict


class RepositoryQuerySet(models.QuerySet):
    def readable_by(self, user) -> "RepositoryQuerySet":
        """Repositories of the projects `user` may read (Project.objects.readable_by)."""
        from .models import Project  # rooms/models.py imports this module

        return self.filter(project__in=Project.objects.readable_by(user))


class Repository(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(
        "rooms.Project", on_delete=models.CASCADE, related_name="repositories"
    )
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # Who pushed it into being (push-to-create); empty for repositories made by an operator.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = RepositoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "repositories"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="repository_name_unique_in_project"
            )
        ]

    def __str__(self):
        return self.name


class RepositoryVersion(StoredVerdict):
    """A pinned commit: immutable once imported. Whether it runs in the Room is its stored
    verdict (StoredVerdict, on its src/) and `rule_problems` (rooms/runtime/verdicts.py writes
    both)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="versions")
    commit_hash = models.CharField(max_length=64)
    ref = models.CharField(max_length=200, blank=True)
    message = models.TextField(blank=True)
    author = models.CharField(max_length=300, blank=True)
    files = models.JSONField(default=dict)  # path -> text; binary files are stored as None
    imported_at = models.DateTimeField(auto_now_add=True)
    # What the snippet rules find in the files the Room runs of it, as text ([]: nothing);
    # None until they are applied (within its push, or by its first reader).
    rule_problems = models.JSONField(null=True, blank=True, default=None, editable=False)

    class Meta:
        ordering = ["-imported_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["repository", "commit_hash"], name="version_commit_unique_in_repository"
            )
        ]

    def __str__(self):
        return f"{self.repository.name}@{self.commit_hash[:12]}"

    @property
    def short_hash(self) -> str:
        return self.commit_hash[:12]


class GitObject(models.Model):
    """One git object of a repository, its raw body zlib-compressed (stored whole, a 200-file
    app takes ~10× git's pack size uncompressed: /work/shared/RESEARCH.md). The compressed body
    with its type and uncompressed `size` is a whole pack entry: a clone sends it as stored."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="+")
    sha = models.CharField(max_length=64)
    type_num = models.PositiveSmallIntegerField()
    size = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["repository", "sha"], name="git_object_unique")
        ]

    def __str__(self):
        return self.sha


class GitRef(models.Model):
    """A ref: a sha, or `ref: <name>` for a symbolic one (HEAD)."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=255)
    value = models.CharField(max_length=300)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["repository", "name"], name="git_ref_unique")
        ]

    def __str__(self):
        return f"{self.name} {self.value}"
