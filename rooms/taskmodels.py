"""A proposal as an MCP task (the Tasks extension): the row that lets a connection that proposed
read the owner's decision by task id, in any worker, after any restart (rooms/review/tasks.py)."""

import secrets

from django.conf import settings
from django.db import models


def new_task_id() -> str:
    # 256 random bits: a task id is the only name of a task, so it must not be guessable.
    return secrets.token_urlsafe(32)


class ProposalTask(models.Model):
    """One connection's task for one proposal. The proposal's status is the task's: the row
    adds who may read it (the connection, i.e. the token, that proposed) and when it began."""

    id = models.CharField(primary_key=True, max_length=64, default=new_task_id, editable=False)
    proposal = models.ForeignKey("rooms.Proposal", on_delete=models.CASCADE, related_name="tasks")
    caller = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The token's key (osfoundry.auth.Principal.token_key): only that token reads the task.
    connection = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # A retry answers the task the first call made, even when both race.
            models.UniqueConstraint(
                fields=["proposal", "connection"], name="one_task_per_proposal_and_connection"
            )
        ]
        indexes = [models.Index(fields=["connection", "-created_at"])]

    def __str__(self):
        return f"task for {self.proposal_id}"
