"""What the card marks on a third-party package, in the owner's words (libraries.Package.marks)."""

from rooms.runtime.libraries import Package


def test_every_mark_is_named_in_order_and_advisories_are_counted():
    package = Package(
        name="old-thing",
        version="1.0.0",
        license="WTFPL",
        bytes=10,
        origin="registry",
        osi=False,
        install_scripts=("postinstall",),
        advisories=({"id": 1}, {"id": 2}),
        deprecated="use new-thing",
    )
    assert package.marks == [
        "has install scripts (never run)",
        "licence not OSI-approved",
        "2 security advisories",
        "deprecated",
    ]


def test_a_curated_package_with_nothing_to_say_has_no_marks():
    assert Package(name="clsx", version="2.1.1", license="MIT", bytes=10).marks == []
