from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("rooms", "0007_proposal_tasks")]

    operations = [
        # It held a change request's summary too: named for what it holds (issue 32, item 6).
        migrations.RenameField(
            model_name="proposal", old_name="decline_reason", new_name="decision_note"
        ),
    ]
