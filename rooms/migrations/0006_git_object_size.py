import zlib

from django.db import migrations, models


def measure(apps, schema_editor):
    """The uncompressed size of each object stored before sizes were."""
    GitObject = apps.get_model("rooms", "GitObject")
    batch = []
    for obj in GitObject.objects.only("pk", "data").iterator(chunk_size=500):
        obj.size = len(zlib.decompress(bytes(obj.data)))
        batch.append(obj)
        if len(batch) == 500:
            GitObject.objects.bulk_update(batch, ["size"])
            batch.clear()
    GitObject.objects.bulk_update(batch, ["size"])


class Migration(migrations.Migration):
    dependencies = [
        ("rooms", "0005_version_verdict_not_yet_checked"),
    ]

    operations = [
        migrations.AddField(
            model_name="gitobject",
            name="size",
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.RunPython(measure, migrations.RunPython.noop),
    ]
