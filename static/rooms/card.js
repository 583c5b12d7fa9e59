// The review card: file filter, collapse/expand, "Viewed" marks, large files on demand, the
// "Wrap lines" toggle, and one question before approving files not marked viewed.
(function () {
  "use strict";

  const review = document.querySelector("[data-review]");
  if (!review) return;
  const files = Array.from(review.querySelectorAll("[data-file]"));
  const listItems = Array.from(review.querySelectorAll("[data-file-list] li[data-path]"));
  const folderItems = Array.from(review.querySelectorAll("[data-file-list] li[data-dir]"));
  const counter = review.querySelector("[data-viewed-count]");
  const storageKey = `osf-viewed:${review.dataset.reviewKey || ""}`;
  // A "Viewed" mark is for a file's content: it holds in the next revision while the file is
  // the same, and resets when it changed (a removed file's mark is for its removal).
  const hashes = (() => {
    const data = document.getElementById("file-hashes");
    try {
      return data ? JSON.parse(data.textContent) : {};
    } catch (_error) {
      return {};
    }
  })();
  const markOf = (file) => `${file.dataset.path}@${hashes[file.dataset.path] || "removed"}`;
  // The same file may be on the card twice (in a diff and in full): one mark for both.
  const marks = new Set();

  function loadViewed() {
    try {
      return new Set(JSON.parse(localStorage.getItem(storageKey) || "[]"));
    } catch (_error) {
      return new Set();
    }
  }
  const viewed = loadViewed();

  function saveViewed() {
    try {
      localStorage.setItem(storageKey, JSON.stringify(Array.from(viewed)));
    } catch (_error) {
      // Private mode or full storage: the marks last for this page only.
    }
  }

  function setCollapsed(file, collapsed) {
    file.classList.toggle("is-collapsed", collapsed);
    const toggle = file.querySelector("[data-file-toggle]");
    if (toggle) {
      toggle.setAttribute("aria-expanded", String(!collapsed));
      toggle.setAttribute("aria-label", `${collapsed ? "Expand" : "Collapse"} ${file.dataset.path}`);
    }
  }

  function updateCount() {
    if (!counter) return;
    const done = Array.from(marks).filter((mark) => viewed.has(mark)).length;
    counter.textContent = `${done}/${marks.size} viewed`;
    counter.classList.toggle("is-done", done === marks.size && marks.size > 0);
    const byPath = new Map(files.map((file) => [file.dataset.path, markOf(file)]));
    listItems.forEach((item) => item.classList.toggle("is-viewed", viewed.has(byPath.get(item.dataset.path))));
  }

  files.forEach((file) => {
    const path = markOf(file);
    marks.add(path);
    const checkbox = file.querySelector("[data-viewed]");
    const toggle = file.querySelector("[data-file-toggle]");
    if (toggle) toggle.addEventListener("click", () => setCollapsed(file, !file.classList.contains("is-collapsed")));
    if (checkbox) {
      checkbox.checked = viewed.has(path);
      if (checkbox.checked) setCollapsed(file, true);
      checkbox.addEventListener("change", () => {
        if (checkbox.checked) viewed.add(path);
        else viewed.delete(path);
        setCollapsed(file, checkbox.checked);
        files.forEach((twin) => {
          const other = twin !== file && markOf(twin) === path && twin.querySelector("[data-viewed]");
          if (other) other.checked = checkbox.checked;
        });
        saveViewed();
        updateCount();
      });
    }
  });
  updateCount();

  const collapseAll = review.querySelector("[data-collapse-all]");
  const expandAll = review.querySelector("[data-expand-all]");
  if (collapseAll) collapseAll.addEventListener("click", () => files.forEach((f) => setCollapsed(f, true)));
  if (expandAll) expandAll.addEventListener("click", () => files.forEach((f) => setCollapsed(f, false)));

  const filter = review.querySelector("[data-file-filter]");
  if (filter) {
    filter.addEventListener("input", () => {
      const needle = filter.value.trim().toLowerCase();
      const match = (path) => !needle || path.toLowerCase().includes(needle);
      files.forEach((file) => (file.hidden = !match(file.dataset.path)));
      listItems.forEach((item) => (item.hidden = !match(item.dataset.path)));
      // A folder stays while something in it matches.
      folderItems.forEach((item) => {
        const inside = `${item.dataset.dir}/`;
        item.hidden = !listItems.some((file) => !file.hidden && file.dataset.path.startsWith(inside));
      });
    });
  }

  // Large files: the server renders them only when asked. The response is our own escaped
  // Pygments HTML for this proposal's file, never data from an event or a frame.
  review.querySelectorAll("[data-load-file]").forEach((link) => {
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      const body = link.closest("[data-file-body]");
      link.textContent = "Loading…";
      try {
        const response = await fetch(link.href, { credentials: "same-origin" });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const box = document.createElement("div");
        box.className = "code";
        box.innerHTML = await response.text();
        body.replaceChildren(box);
        const file = body.closest("[data-file]");
        file.removeAttribute("data-unloaded");
        file.dispatchEvent(new CustomEvent("osf:file-loaded", { bubbles: true }));
      } catch (error) {
        link.textContent = `Could not load (${error.message}); retry`;
      }
    });
  });

  // A link to a line inside a collapsed file opens that file.
  function revealTarget() {
    if (!location.hash) return;
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    const file = target && target.closest("[data-file]");
    if (file) setCollapsed(file, false);
  }
  window.addEventListener("hashchange", revealTarget);
  revealTarget();

  // "Wrap lines", remembered on this device for every card.
  const wrap = review.querySelector("[data-wrap-lines]");
  const wrapKey = "osf-wrap-lines";
  function setWrapped(on) {
    review.classList.toggle("is-wrapped", on);
    if (wrap) wrap.checked = on;
  }
  try {
    setWrapped(localStorage.getItem(wrapKey) === "1");
  } catch (_error) {
    setWrapped(false);
  }
  if (wrap) {
    wrap.addEventListener("change", () => {
      setWrapped(wrap.checked);
      try {
        localStorage.setItem(wrapKey, wrap.checked ? "1" : "0");
      } catch (_error) {
        // Private mode or full storage: the choice lasts for this page only.
      }
    });
  }

  // Approving with files not marked viewed asks once, naming them (and why a file was never
  // shown: a large one not loaded). The dialog is the page's own: "Keep reviewing" goes back to
  // the first such file, "Approve anyway" sends the approval.
  function unviewedFiles() {
    const found = new Map(); // one entry per mark: a file shown twice is one file
    files.forEach((file) => {
      const mark = markOf(file);
      if (viewed.has(mark) || found.has(mark)) return;
      const reason = file.hasAttribute("data-unloaded") ? ` (not loaded: ${file.dataset.reason})` : "";
      found.set(mark, { file, text: `${file.dataset.path}${reason}` });
    });
    return Array.from(found.values());
  }

  const approveForm = document.querySelector("[data-approve-form]");
  const confirmDialog = document.querySelector("[data-approve-confirm]");
  let approvedAnyway = false;
  if (approveForm && confirmDialog) {
    const title = confirmDialog.querySelector("[data-approve-confirm-title]");
    const list = confirmDialog.querySelector("[data-approve-confirm-files]");
    approveForm.addEventListener("submit", (event) => {
      const unviewed = unviewedFiles();
      if (approvedAnyway || !unviewed.length) return;
      event.preventDefault();
      title.textContent = `${unviewed.length} of ${marks.size} file${marks.size === 1 ? "" : "s"} not viewed — approve anyway?`;
      list.replaceChildren(
        ...unviewed.slice(0, 12).map(({ file, text }) => {
          const item = document.createElement("li");
          const link = document.createElement("a");
          link.href = `#${file.id}`;
          link.textContent = text;
          link.addEventListener("click", () => confirmDialog.close());
          item.append(link);
          return item;
        })
      );
      if (unviewed.length > 12) {
        const more = document.createElement("li");
        more.textContent = `and ${unviewed.length - 12} more`;
        list.append(more);
      }
      confirmDialog.dataset.files = String(unviewed.length);
      confirmDialog.showModal();
    });
    confirmDialog.querySelector("[data-approve-confirm-yes]").addEventListener("click", () => {
      approvedAnyway = true;
      confirmDialog.close();
      approveForm.requestSubmit();
    });
    confirmDialog.querySelector("[data-approve-confirm-back]").addEventListener("click", () => {
      confirmDialog.close();
      const first = unviewedFiles()[0];
      if (!first) return;
      setCollapsed(first.file, false);
      first.file.scrollIntoView({ block: "start" });
      const box = first.file.querySelector("[data-viewed]");
      (box || first.file.querySelector(".file-path") || first.file).focus({ preventScroll: true });
    });
  }

  // One click is one decision; the server refuses a second anyway.
  document.querySelectorAll("[data-review] form, #decision form").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (event.defaultPrevented) return;
      form.querySelectorAll("button[type=submit]").forEach((button) => (button.disabled = true));
    });
  });
})();
