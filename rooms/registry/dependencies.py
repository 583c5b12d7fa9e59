"""What an app's package.json asks for, sorted by where each package comes from (no I/O).

Only `dependencies` count: devDependencies are build tools (vite, typescript, a test runner)
that never run in the Room. Each dependency is:

- React or React DOM: the Room's own (19.3.1), as is tailwindcss (the Room's Tailwind runtime,
  which an app asks for from CSS); another range is only a warning;
- a @types/ package: types, which the compiler strips: nothing to fetch;
- a package of the curated set whose version satisfies the range: the curated one (nothing
  fetched); its version outside the range: from the registry where one is configured, else
  the curated one with a warning;
- anything else: from the registry where one is configured (NPM_REGISTRY_URL); without one it
  is refused, naming what is available.

A package.json that is not JSON (comments, trailing commas) names no dependencies: a warning
says so, and an import of a package it meant to name is refused as any unknown one is.
"""

import json
from dataclasses import dataclass, field

from django.conf import settings

from osfoundry.errors import Problem

from ..runtime import libraries
from .resolve import NAME, PROVIDED, is_types, satisfies, spec_problem

MANIFEST = "package.json"
FIELD = f"files.{MANIFEST}"


@dataclass
class AppDependencies:
    registry: dict[str, str] = field(default_factory=dict)  # name -> range, to resolve
    curated: dict[str, str] = field(default_factory=dict)  # name -> range, the curated copy
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def has_registry() -> bool:
    return bool(settings.NPM_REGISTRY_URL)


def read_dependencies(files: dict[str, str]) -> AppDependencies:
    found = AppDependencies()
    text = files.get(MANIFEST)
    if text is None:
        return found
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        found.warnings.append(
            f"{MANIFEST} is not valid JSON ({exc.msg}, line {exc.lineno}), so its dependencies "
            "were not read; the Room runs the app with React and the curated set only"
        )
        return found
    dependencies = manifest.get("dependencies") if isinstance(manifest, dict) else None
    if dependencies is None:
        return found
    if not isinstance(dependencies, dict):
        found.problems.append(
            Problem(
                f"{MANIFEST}: dependencies must be an object of name: version range", field=FIELD
            )
        )
        return found
    curated = {name: version for name, version, _imports in libraries.offered()}
    # What a curated package is imported as, when that is another package's name: tailwindcss
    # (the Room's Tailwind is @tailwindcss/browser, asked for from CSS) is always the Room's.
    aliases = {
        libraries.package_name(imports[0]): version
        for name, version, imports in libraries.offered()
        if libraries.package_name(imports[0]) != name
    }
    for name, spec in dependencies.items():
        sort(found, name, spec, curated, aliases)
    return found


def sort(
    found: AppDependencies, name: str, spec, curated: dict[str, str], aliases: dict[str, str]
) -> None:
    where = f"{MANIFEST}: dependencies.{name}"
    if not isinstance(name, str) or len(name) > 214 or not NAME.match(name):
        found.problems.append(Problem(f"{where}: not an npm package name", field=FIELD))
        return
    if problem := spec_problem(spec):
        found.problems.append(Problem(f"{where} {spec!r}: {problem}", field=FIELD))
        return
    if is_types(name):
        return  # types only: the compiler strips them
    provided = PROVIDED.get(name) or aliases.get(name)
    if provided:
        if not satisfies(provided, spec):
            found.warnings.append(
                f"{MANIFEST} asks for {name} {spec}; the Room runs {name} {provided}, "
                "which every app shares"
            )
        return
    if name in curated and (satisfies(curated[name], spec) or not has_registry()):
        if not satisfies(curated[name], spec):
            found.warnings.append(
                f"{MANIFEST} asks for {name} {spec}; this Room serves no npm registry, so the "
                f"app gets the curated {name} {curated[name]}"
            )
        found.curated[name] = spec
        return
    if has_registry():
        found.registry[name] = spec
        return
    found.problems.append(
        Problem(
            f"{where}: {name} is not available: this Room resolves no packages from an npm "
            f"registry, and {libraries.available_text()}; remove it from {MANIFEST} and copy "
            "any code you need into the app",
            field=FIELD,
        )
    )
