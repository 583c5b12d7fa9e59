// The diff of an update (templates/rooms/_diff.html): unified or split, the choice remembered
// on this device for every diff. The server sends the unified rows only; the split view is built
// from them the first time it is asked for (each removed line beside the added line after it,
// as rooms.content.diffs.split_rows does), by moving copies of our own cells, never parsing HTML.
(function () {
  "use strict";

  const storageKey = "osf-diff-view";

  function stored() {
    try {
      return localStorage.getItem(storageKey) === "split" ? "split" : "unified";
    } catch (_error) {
      return "unified";
    }
  }

  function cell(tag, className, source) {
    const td = document.createElement(tag);
    td.className = className;
    if (source) td.append(...Array.from(source.childNodes, (node) => node.cloneNode(true)));
    return td;
  }

  function side(row, kind, numberCell) {
    if (!row) return [cell("td", "diff-num diff-empty"), cell("td", "diff-line diff-empty")];
    const cells = row.cells;
    return [cell("td", `diff-num diff-${kind}`, cells[numberCell]), cell("td", `diff-line diff-${kind}`, cells[2])];
  }

  function splitRow(path, old, added, kind) {
    const tr = document.createElement("tr");
    tr.className = "diff-row";
    tr.dataset.path = path;
    if (added) tr.dataset.line = added.dataset.line;
    if (old) tr.dataset.oldLine = old.dataset.oldLine || old.cells[0].textContent;
    tr.append(...side(old, kind === "context" ? "context" : "del", 0));
    tr.append(...side(added, kind === "context" ? "context" : "add", 1));
    return tr;
  }

  function splitBody(tbody) {
    const out = document.createElement("tbody");
    let dels = [];
    let adds = [];
    function flush() {
      for (let k = 0; k < Math.max(dels.length, adds.length); k += 1) {
        const row = dels[k] || adds[k];
        out.append(splitRow(row.dataset.path, dels[k], adds[k], "change"));
      }
      dels = [];
      adds = [];
    }
    for (const row of tbody.rows) {
      if (row.classList.contains("diff-hunk")) {
        const tr = document.createElement("tr");
        tr.className = "diff-hunk";
        tr.append(cell("td", "diff-num"), cell("td", "diff-line", row.cells[1]));
        tr.cells[1].colSpan = 3;
        out.append(tr);
      } else if (row.hasAttribute("data-inline-comment")) {
        // A line comment (comments.js) stays under its line, across both sides.
        flush();
        const copy = row.cloneNode(true);
        copy.querySelectorAll("[id]").forEach((el) => el.removeAttribute("id"));
        copy.cells[0].colSpan = 4;
        out.append(copy);
      } else if (row.classList.contains("diff-context")) {
        flush();
        out.append(splitRow(row.dataset.path, row, row, "context"));
      } else if (row.classList.contains("diff-del")) {
        if (adds.length) flush();
        dels.push(row);
      } else {
        adds.push(row);
      }
    }
    flush();
    return out;
  }

  function buildSplit(unified) {
    const box = document.createElement("div");
    box.className = "diff-code diff-split hl";
    // A scrolling box a keyboard can reach, named as its unified twin.
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", unified.getAttribute("aria-label") || "Changes");
    const table = document.createElement("table");
    table.className = "diff-table";
    // A fixed layout takes its widths from the first row, a hunk header: name them here.
    const columns = document.createElement("colgroup");
    ["num", "line", "num", "line"].forEach((name) => {
      const col = document.createElement("col");
      col.className = `diff-col-${name}`;
      columns.append(col);
    });
    table.append(columns);
    unified.querySelectorAll("tbody").forEach((tbody) => table.append(splitBody(tbody)));
    box.append(table);
    unified.after(box);
  }

  function show(diff, view) {
    if (view === "split") {
      diff.querySelectorAll(".diff-unified").forEach((unified) => {
        if (!unified.nextElementSibling || !unified.nextElementSibling.classList.contains("diff-split")) {
          buildSplit(unified);
        }
      });
    }
    diff.classList.toggle("is-split", view === "split");
    diff.querySelectorAll("[data-diff-view]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.diffView === view));
    });
  }

  const diffs = Array.from(document.querySelectorAll("[data-diff]"));
  diffs.forEach((diff) => {
    show(diff, stored());
    diff.querySelectorAll("[data-diff-view]").forEach((button) => {
      button.addEventListener("click", () => {
        const view = button.dataset.diffView;
        diffs.forEach((each) => show(each, view));
        try {
          localStorage.setItem(storageKey, view);
        } catch (_error) {
          // Private mode or full storage: the choice lasts for this page only.
        }
      });
    });
  });
})();

// Unchanged files are fetched when opened: our own escaped Pygments HTML for a file of this
// card or revision, never data from an event or a frame.
(function () {
  "use strict";

  document.querySelectorAll("details[data-load-url]").forEach((details) => {
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      const note = details.querySelector("[data-loading]");
      try {
        const response = await fetch(details.dataset.loadUrl, { credentials: "same-origin" });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const box = document.createElement("div");
        box.className = "code";
        box.innerHTML = await response.text();
        (note || details.lastElementChild).replaceWith(box);
      } catch (error) {
        delete details.dataset.loaded;
        if (note) note.textContent = `Could not load (${error.message}); close and open to retry`;
      }
    });
  });
})();
