"""The npm packages apps bring from the registry, stored once, by content, for every app.

NpmPackage holds what the Room keeps of one package version (rooms/registry/tarballs.py): its
package.json and the files its frame may load, under the sha512 of the tarball they came from,
checked against the registry's integrity hash before anything was stored. A second app that
resolves the same version finds it here and fetches nothing.

PackageBundle is the module table one proposal's app runs (rooms/registry/modules.py), under
the sha256 of its bytes: bound into the content hash the owner approves, served to the frame
from this site, never rebuilt. Both are immutable; neither is ever deleted while a proposal
names it (PROTECT).
"""

from django.db import models


class NpmPackage(models.Model):
    key = models.CharField(primary_key=True, max_length=100)  # "sha512-<base64>" of the tarball
    name = models.CharField(max_length=214)
    version = models.CharField(max_length=256)
    # What the registry said the tarball hashes to (dist.integrity, else "sha1:<shasum>"): a
    # version found again with the same is taken from here, unfetched.
    integrity = models.CharField(max_length=300)
    manifest = models.JSONField()  # the package's own package.json
    files = models.BinaryField()  # gzip of the JSON {path: text} the Room keeps
    unpacked_bytes = models.PositiveBigIntegerField()  # every file of the tarball
    install_scripts = models.JSONField(default=list)  # what npm would run; the Room runs none
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["name", "version"])]

    def __str__(self):
        return f"{self.name}@{self.version}"


class PackageBundle(models.Model):
    sha256 = models.CharField(primary_key=True, max_length=64)  # of the table's JSON
    data = models.BinaryField()  # gzip of that JSON, as it is served
    bytes = models.PositiveBigIntegerField()  # the JSON's size
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.sha256[:12]
