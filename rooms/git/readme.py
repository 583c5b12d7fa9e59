"""A repository version's README as safe HTML: markdown-it-py renders CommonMark with raw HTML
off, then nh3 (the Rust ammonia sanitiser) keeps only harmless tags and attributes, so neither a
raw tag nor a javascript: link from the repository reaches the owner's page."""

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

README_NAMES = ("README.md", "readme.md", "README.markdown", "README")
MAX_README_CHARS = 200_000

markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def find_readme(files: dict[str, str | None]) -> tuple[str, str] | None:
    for name in README_NAMES:
        if isinstance(text := files.get(name), str):
            return name, text
    return None


def render_readme(text: str) -> SafeString:
    html = markdown.render(text[:MAX_README_CHARS])
    cleaned = nh3.clean(
        html,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)  # noqa: S308 — sanitised by nh3 just above
