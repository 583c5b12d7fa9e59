// Line comments on the review card: click a line number (or Tab to it and press Enter) to
// comment on it, shift-click another line of the same file for a range. Drafts stay in this
// browser (per proposal) until the owner sends them with "Request changes", as one JSON list in
// the form's hidden field. Works on the full file view (Pygments line-number links) and on diff
// rows (data-line).
//
// Comments already sent sit beside their lines too, wherever the card shows those lines as
// they were when commented on (data-on-card): each links to its entry in "Review comments",
// and the entry links back to it. Their text is copied from the server's own escaped list.
(function () {
  "use strict";

  const card = document.querySelector("[data-review][data-proposal-id]");
  if (!card) return;

  function inlineBox(item, tag) {
    const box = document.createElement(tag);
    box.className = "inline-comment";
    box.dataset.inlineComment = "";
    box.setAttribute("role", "note");
    const where = document.createElement("span");
    where.className = "inline-comment-where";
    const author = document.createElement("strong");
    author.textContent = item.dataset.author || "";
    const start = item.dataset.lineStart;
    const end = item.dataset.lineEnd;
    where.append(author, ` on line${start === end ? ` ${start}` : `s ${start}–${end}`} · `);
    const back = document.createElement("a");
    back.href = `#${item.id}`;
    back.textContent = "in the review comments";
    where.append(back);
    const body = document.createElement("span");
    body.className = "inline-comment-body";
    const source = item.querySelector(".comment-body");
    if (source) body.append(...Array.from(source.childNodes, (node) => node.cloneNode(true)));
    box.append(where, body);
    box.setAttribute("aria-label", `Comment by ${author.textContent} on ${item.dataset.path} line ${end}`);
    return box;
  }

  // Under the comment's last line, in each place the card shows it (a full file, a diff).
  function placeComment(item, within) {
    const path = item.dataset.path;
    const end = item.dataset.lineEnd;
    const placed = [];
    const files = within.matches("[data-file][data-anchor]") ? [within] : Array.from(within.querySelectorAll("[data-file][data-anchor]"));
    files.forEach((file) => {
      if (file.dataset.path !== path) return;
      const anchor = document.getElementById(`${file.dataset.anchor}-${end}`);
      const line = anchor && file.contains(anchor) && anchor.closest(".line");
      if (!line || (line.nextElementSibling && line.nextElementSibling.dataset.commentOf === item.id)) return;
      const box = inlineBox(item, "span");
      box.dataset.commentOf = item.id;
      line.after(box);
      placed.push(box);
    });
    within.querySelectorAll(`.diff-unified tr[data-line="${CSS.escape(end)}"]`).forEach((row) => {
      if (row.dataset.path !== path) return;
      if (row.nextElementSibling && row.nextElementSibling.dataset.commentOf === item.id) return;
      const tr = document.createElement("tr");
      tr.className = "inline-comment-row";
      tr.dataset.inlineComment = "";
      tr.dataset.commentOf = item.id;
      const cell = document.createElement("td");
      cell.colSpan = 3;
      cell.appendChild(inlineBox(item, "div"));
      tr.appendChild(cell);
      row.after(tr);
      placed.push(cell.firstChild);
    });
    return placed;
  }

  function placeAll(within) {
    document.querySelectorAll("[data-comment][data-on-card]").forEach((item) => {
      const placed = placeComment(item, within);
      const link = item.querySelector("[data-comment-line]");
      if (!link) return;
      const first = document.querySelector(`[data-comment-of="${CSS.escape(item.id)}"]`);
      if (first) {
        const box = first.matches("tr") ? first.querySelector(".inline-comment") : first;
        box.id = `${item.id}-inline`;
        link.href = `#${box.id}`;
      } else if (!placed.length && !document.getElementById(link.hash.slice(1))) {
        link.removeAttribute("href"); // the line is not on this card (a diff shows only changes)
      }
    });
  }
  placeAll(card);
  // A large file rendered on demand (card.js) gets its comments once it is there.
  card.addEventListener("osf:file-loaded", (event) => placeAll(event.target));

  if (!card.hasAttribute("data-commentable")) {
    // Decided: whatever was drafted here was sent, or no longer can be.
    try {
      localStorage.removeItem(`osf-drafts:${card.dataset.proposalId}`);
    } catch (_error) {
      // Nothing kept to clear.
    }
    return;
  }
  const review = card;
  const form = document.querySelector("[data-request-changes-form]");
  if (!form) return;
  const field = form.querySelector("[data-comments-field]");
  const list = form.querySelector("[data-draft-comments]");
  const storageKey = `osf-drafts:${review.dataset.proposalId}`;
  let drafts = [];
  let anchor = null; // {path, line} of the last clicked line, for shift-click ranges
  let composer = null;

  try {
    drafts = JSON.parse(localStorage.getItem(storageKey) || "[]");
    if (!Array.isArray(drafts)) drafts = [];
  } catch (_error) {
    drafts = [];
  }

  function save() {
    field.value = drafts.length ? JSON.stringify(drafts) : "";
    try {
      if (drafts.length) localStorage.setItem(storageKey, JSON.stringify(drafts));
      else localStorage.removeItem(storageKey);
    } catch (_error) {
      // Private mode or full storage: the drafts last for this page only.
    }
  }

  function render() {
    list.replaceChildren();
    drafts.forEach((draft, index) => {
      const item = document.createElement("li");
      item.dataset.draft = "";
      const where = document.createElement("code");
      const lines = draft.line_end !== draft.line_start ? `${draft.line_start}–${draft.line_end}` : `${draft.line_start}`;
      where.textContent = `${draft.path}:${lines}`;
      const body = document.createElement("span");
      body.textContent = ` ${draft.body}`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "link-button";
      remove.textContent = "remove";
      remove.setAttribute("aria-label", `Remove the comment on ${draft.path} line ${lines}`);
      remove.addEventListener("click", () => {
        drafts.splice(index, 1);
        save();
        render();
      });
      item.append(where, body, " ", remove);
      list.appendChild(item);
    });
    list.hidden = drafts.length === 0;
    // Drafted comments are sent with "Request changes": its form stays open while there are any.
    const box = form.closest("details");
    if (box && drafts.length) box.open = true;
    const button = form.querySelector("[data-request-changes]");
    button.textContent = drafts.length ? `Request changes (${drafts.length} comment${drafts.length === 1 ? "" : "s"})` : "Request changes";
  }

  function closeComposer() {
    if (composer) composer.remove();
    composer = null;
  }

  function openComposer(path, start, end, after, inTable) {
    closeComposer();
    // From the keyboard, focus goes back to the line number the composer was opened from.
    const origin = document.activeElement;
    const back = () => {
      closeComposer();
      if (origin && origin.isConnected && origin !== document.body) origin.focus({ preventScroll: true });
    };
    const box = document.createElement("div");
    box.className = "line-composer";
    box.dataset.lineComposer = "";
    const label = document.createElement("label");
    const lines = end !== start ? `lines ${start}–${end}` : `line ${start}`;
    label.textContent = `Comment on ${path}, ${lines}`;
    const text = document.createElement("textarea");
    text.rows = 3;
    text.maxLength = 5000;
    text.setAttribute("aria-label", label.textContent);
    label.appendChild(text);
    const add = document.createElement("button");
    add.type = "button";
    add.className = "button small primary";
    add.textContent = "Add comment";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.className = "button small";
    cancel.textContent = "Cancel";
    add.addEventListener("click", () => {
      const body = text.value.trim();
      if (!body) return text.focus();
      drafts.push({path, line_start: start, line_end: end, body});
      save();
      render();
      back();
    });
    cancel.addEventListener("click", back);
    text.addEventListener("keydown", (event) => {
      if (event.key === "Escape") back();
    });
    box.append(label, add, cancel);
    if (inTable) {
      const row = document.createElement("tr");
      const cell = document.createElement("td");
      cell.colSpan = 3;
      cell.appendChild(box);
      row.appendChild(cell);
      after.after(row);
      composer = row;
    } else {
      after.after(box);
      composer = box;
    }
    text.focus();
  }

  function rangeFrom(path, line, extend) {
    if (extend && anchor && anchor.path === path) {
      return [Math.min(anchor.line, line), Math.max(anchor.line, line)];
    }
    anchor = {path, line};
    return [line, line];
  }

  function lineNumberLink(target) {
    const link = target.closest("a[href^='#']");
    return link && link.querySelector(".linenos") ? link : null;
  }

  // A drag from one line number to another of the same file comments on the range between.
  let pressed = null;
  function lineAt(target) {
    const row = target.closest(".diff-num") && target.closest("tr[data-line]");
    if (row) return { path: row.dataset.path, line: Number(row.dataset.line), after: row, inTable: true };
    const link = lineNumberLink(target);
    const file = link && link.closest("[data-file][data-anchor]");
    const match = file && link.getAttribute("href").match(/-(\d+)$/);
    if (!match) return null;
    return { path: file.dataset.path, line: Number(match[1]), after: link.closest(".line") || link, inTable: false };
  }
  review.addEventListener("mousedown", (event) => {
    pressed = lineAt(event.target);
  });
  review.addEventListener("mouseup", (event) => {
    const released = lineAt(event.target);
    const start = pressed;
    pressed = null;
    if (!start || !released || start.path !== released.path || start.line === released.line) return;
    const first = Math.min(start.line, released.line);
    const last = Math.max(start.line, released.line);
    const end = start.line > released.line ? start : released;
    anchor = null;
    openComposer(start.path, first, last, end.after, end.inTable);
  });

  review.addEventListener("click", (event) => {
    // A diff row's new-side line number.
    const number = event.target.closest(".diff-num");
    const row = number && number.closest("tr[data-line]");
    if (row) {
      event.preventDefault(); // a line number's link comments here, it does not scroll
      const line = Number(row.dataset.line);
      const [start, end] = rangeFrom(row.dataset.path, line, event.shiftKey);
      openComposer(row.dataset.path, start, end, row, true);
      return;
    }
    // A line-number link of the full file view: "#<file anchor>-<n>".
    // (Enter on the focused link clicks the link itself, not its number.)
    const link = lineNumberLink(event.target);
    const file = link && link.closest("[data-file][data-anchor]");
    if (!file) return;
    const match = link.getAttribute("href").match(/-(\d+)$/);
    if (!match) return;
    event.preventDefault();
    const [start, end] = rangeFrom(file.dataset.path, Number(match[1]), event.shiftKey);
    openComposer(file.dataset.path, start, end, link.closest(".line") || link, false);
  });

  save();
  render();
})();
