"""The two-file standup timer used by the demo seed, the benchmarks and the tests, and the demo
seed's other apps (agents/management/commands/seed_demo.py)."""

from pathlib import Path

HERE = Path(__file__).parent


def app_files(folder: Path) -> dict[str, str]:
    return {
        "src/App.tsx": (folder / "App.tsx").read_text(),
        "src/styles.css": (folder / "styles.css").read_text(),
    }


def standup_timer_files() -> dict[str, str]:
    return app_files(HERE)


# The timer's update in the demo: a minute a speaker, and a button to start over.
TIMER_UPDATE = [
    ("seconds: 90 }", "seconds: 60 }"),
    (
        "  const person = TEAM[index];\n",
        "  function reset() {\n"
        "    setRunning(false);\n"
        "    setIndex(0);\n"
        "    setLeft(TEAM[0].seconds);\n"
        "  }\n"
        "\n"
        "  const person = TEAM[index];\n",
    ),
    (
        "        <button onClick={next}>Next</button>\n",
        "        <button onClick={next}>Next</button>\n"
        "        <button onClick={reset}>Reset</button>\n",
    ),
]


def standup_timer_update_files() -> dict[str, str]:
    files = standup_timer_files()
    app = files["src/App.tsx"]
    for old, new in TIMER_UPDATE:
        assert old in app, f"the demo timer no longer has {old!r}"
        app = app.replace(old, new)
    return {**files, "src/App.tsx": app}


def speaker_shuffle_files() -> dict[str, str]:
    return app_files(HERE / "shuffle")


def parking_lot_files() -> dict[str, str]:
    return app_files(HERE / "parking")
