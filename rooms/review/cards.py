"""What a card shows besides its files: what changed, its revisions and the review so far.

An update shows "Changes since the approved version (vN)", N being the app's current version
(if the app moved on since the update was proposed, the diff is against where it is now, and
the decision binds to that). A revision shows "Changes since your last review". A line comment
sits beside its line wherever the card shows that line as it was when commented on.
"""

import hashlib

from osfoundry.errors import Invalid
from osfoundry.http import MalformedJSON, parse_json

from ..content.diffs import diff_files
from ..content.filetree import file_tree
from ..content.highlight import file_anchor
from ..models import Proposal
from ..runtime.rules import app_files
from ..runtime.snippet_rules import MAX_PATH_CHARS
from . import revisions

# The longest review the card sends: MAX_COMMENTS comments of MAX_COMMENT_CHARS, every character
# of a body and its path escaped to two (JSON.stringify writes a newline or a quote as \n, \"),
# and its line numbers. Anything longer is not the card's: refused before it is parsed.
MAX_COMMENTS_JSON_CHARS = revisions.MAX_COMMENTS * (
    2 * (revisions.MAX_COMMENT_CHARS + MAX_PATH_CHARS) + 100
)


def repo_review_context(proposal: Proposal) -> dict:
    version = proposal.repository_version
    assert version is not None
    files = app_files(proposal)
    chain = revisions.line_of_work(proposal)
    context: dict = {
        "line": chain,
        "comments": placed_comments(proposal, chain),
        "diffs": [],
        "file_hashes": {path: file_hash(text) for path, text in files.items()},
        # Marks live per repository: a file keeps its mark in the next version while unchanged.
        "viewed_key": f"repo-{version.repository_id}",
    }
    previous = proposal.previous
    if previous is not None and previous.repository_version is not None:
        old = previous.repository_version
        title = f"Changes since your last review (revision {previous.iteration}, {old.short_hash})"
        diff = version_diff(app_files(previous), files, old.pk, version.pk)
        context["diffs"].append((title, diff))
    if proposal.is_update and proposal.app is not None:
        app = proposal.app
        current = app.proposal
        update_context(context, proposal)
        old_version = current.repository_version
        title = f"Changes since the approved version (v{app.revision}"
        title += f", {old_version.short_hash})" if old_version else ")"
        old_key = old_version.pk if old_version else current.pk
        context["diffs"].append(
            (title, version_diff(app_files(current), files, old_key, version.pk))
        )
    return context


def version_diff(before: dict, after: dict, old_key, new_key):
    """What the Room runs of two versions (src/), hashed by version, which never changes."""
    return diff_files(
        dict(before), dict(after), old_hash=f"version-{old_key}", new_hash=f"version-{new_key}"
    )


def update_context(context: dict, proposal: Proposal) -> None:
    """An update's versions: the app's current one, the one approving makes, and whether the
    tab's name changes with it (a rename since is undone by approving a name proposed before)."""
    app = proposal.app
    assert app is not None
    context["base_revision"] = app.revision
    context["next_version"] = app.revision + 1
    context["stale_base"] = proposal.is_pending and app.revision != proposal.base_revision
    context["renames_tab"] = proposal.is_pending and proposal.name != app.name


def placed_comments(proposal: Proposal, chain: list[Proposal]) -> list[dict]:
    """The line of work's comments, each saying whether this card shows its lines as they were
    when it was made (`on_card`: it sits beside them) and its file's line anchor prefix."""
    comments = revisions.review_comments(chain)
    shown = app_files(proposal)
    files = {str(p.pk): app_files(p) for p in chain}
    for comment in comments:
        made_on = files[comment["proposal_id"]]
        start, end = comment["line_start"], comment["line_end"]
        comment["on_card"] = revisions.same_lines(made_on, shown, comment["path"], start, end)
        comment["anchor"] = file_anchor(comment["path"])
    return comments


def file_hash(text: str | None) -> str:
    """A file's short content hash: the card's "Viewed" mark holds while it stays the same."""
    data = (text or "").encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


def review_context(proposal: Proposal) -> dict:
    chain = revisions.line_of_work(proposal)
    context: dict = {
        "line": chain,
        "comments": placed_comments(proposal, chain),
        "file_hashes": {path: file_hash(text) for path, text in proposal.files.items()},
        # Viewed marks live per app (updates) or per line of work: a file keeps its mark in
        # the next revision while its content is the same.
        "viewed_key": f"app-{proposal.app_id}" if proposal.is_update else f"line-{chain[0].pk}",
    }
    diffs = []
    previous = proposal.previous
    if previous is not None:
        diffs.append(
            (
                f"Changes since your last review (revision {previous.iteration})",
                diff_files(
                    previous.files,
                    proposal.files,
                    old_hash=previous.content_hash,
                    new_hash=proposal.content_hash,
                ),
            )
        )
    if proposal.is_update and proposal.app is not None:
        app = proposal.app
        current = app.proposal
        update_context(context, proposal)
        diffs.append(
            (
                f"Changes since the approved version (v{app.revision})",
                diff_files(
                    current.files,
                    proposal.files,
                    old_hash=current.content_hash,
                    new_hash=proposal.content_hash,
                ),
            )
        )
    context["diffs"] = diffs
    return context


def sidebar(files: list) -> list[dict]:
    """The card's file tree: folder rows, and file rows carrying their FileView (`file`)."""
    views = {view.path: view for view in files}
    return [{**row, "file": views.get(row["path"])} for row in file_tree(views)]


def parse_comments(raw: str) -> list[dict]:
    """The card's collected line comments, posted as one JSON list."""
    if not raw.strip():
        return []
    if len(raw) > MAX_COMMENTS_JSON_CHARS:
        raise Invalid(
            f"comments: {len(raw):,} characters, at most {MAX_COMMENTS_JSON_CHARS:,}; "
            "send the rest with the next review",
            field="comments",
        )
    # The service's parser, with its rules: a form field nested past the parser's recursion
    # limit is the sender's mistake, as a request body is.
    try:
        comments = parse_json(raw.encode(errors="surrogatepass"), name="comments")
    except MalformedJSON as error:
        raise Invalid(f"{error}; reload the card and comment again", field="comments") from None
    if not isinstance(comments, list):
        raise Invalid("comments: must be a list", field="comments")
    return comments
