"""The two-file standup timer used by the demo seed, the benchmarks and the tests."""

from pathlib import Path

HERE = Path(__file__).parent


def standup_timer_files() -> dict[str, str]:
    return {
        "src/App.tsx": (HERE / "App.tsx").read_text(),
        "src/styles.css": (HERE / "styles.css").read_text(),
    }
