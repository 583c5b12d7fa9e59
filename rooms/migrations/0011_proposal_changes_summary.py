from django.db import migrations, models

CHANGES_REQUESTED = "changes_requested"


def move_summaries(apps, schema_editor):
    """A change request's summary leaves the decline reason's field for its own."""
    Proposal = apps.get_model("rooms", "Proposal")
    for proposal in Proposal.objects.filter(status=CHANGES_REQUESTED).exclude(decision_note=""):
        proposal.changes_summary = proposal.decision_note
        proposal.decision_note = ""
        proposal.save(update_fields=["changes_summary", "decision_note"])


def restore_summaries(apps, schema_editor):
    Proposal = apps.get_model("rooms", "Proposal")
    for proposal in Proposal.objects.filter(status=CHANGES_REQUESTED).exclude(changes_summary=""):
        proposal.decision_note = proposal.changes_summary
        proposal.save(update_fields=["decision_note"])


class Migration(migrations.Migration):
    dependencies = [("rooms", "0010_npm_packages")]

    operations = [
        # The owner's words with a decision were one field for two things (issue 32, item 6): a
        # decline's reason, and a change request's summary. Each has its own field now.
        migrations.AddField(
            model_name="proposal",
            name="changes_summary",
            field=models.CharField(blank=True, max_length=1000),
        ),
        migrations.RunPython(move_summaries, restore_summaries),
        migrations.RenameField(
            model_name="proposal", old_name="decision_note", new_name="decline_reason"
        ),
    ]
