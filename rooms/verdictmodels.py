"""Where a verdict on whether an app runs in the Room is stored: on what it judges.

A snippet proposal carries the verdict on its files, a repository version the verdict on its
src/ (a proposal of a version reads its version's). rooms/runtime/verdicts.py alone writes these
fields and reads them: it stores each verdict with the fingerprint of what found it (the
compiler, the curated libraries and the rules), and finds it again when that changed.
"""

from django.db import models


class StoredVerdict(models.Model):
    # RunCheck.as_dict() (rooms/runtime/runnable.py); None until checked.
    run_verdict = models.JSONField(null=True, blank=True, default=None, editable=False)
    run_verdict_fingerprint = models.CharField(max_length=100, blank=True, editable=False)

    class Meta:
        abstract = True
