// The review card from the keyboard, as on GitHub: j / k next and previous file, v marks the
// current file viewed, t jumps to the file filter, d to the decision, ? lists the keys. The file in view is marked
// in the tree. Keys do nothing while typing in a field, or with Ctrl, Alt or Cmd held.
(function () {
  "use strict";

  const review = document.querySelector("[data-review]");
  if (!review) return;
  const files = () => Array.from(review.querySelectorAll("[data-file]")).filter((f) => !f.hidden);
  const help = document.querySelector("[data-keys-help]");
  let current = null;

  function mark(file) {
    current = file;
    files().forEach((other) => other.classList.toggle("is-current", other === file));
    review.querySelectorAll("[data-file-list] li[data-path]").forEach((item) => {
      const on = Boolean(file) && item.dataset.path === file.dataset.path;
      item.classList.toggle("current", on);
      if (on) showInTree(item);
    });
  }

  // The tree scrolls to its current file by itself; the page never moves for it (on a phone
  // the tree is above the code, and scrolling the page there would take the reader away).
  function showInTree(item) {
    const list = item.closest("[data-file-list]");
    if (!list || list.scrollHeight <= list.clientHeight) return;
    const outer = list.getBoundingClientRect();
    const inner = item.getBoundingClientRect();
    if (inner.top < outer.top) list.scrollTop -= outer.top - inner.top;
    else if (inner.bottom > outer.bottom) list.scrollTop += inner.bottom - outer.bottom;
  }

  function go(step) {
    const list = files();
    if (!list.length) return;
    const index = list.indexOf(current);
    const next = list[Math.min(list.length - 1, Math.max(0, index < 0 ? 0 : index + step))];
    next.scrollIntoView({ block: "start" });
    const toggle = next.querySelector("[data-file-toggle]");
    if (toggle && next.classList.contains("is-collapsed")) toggle.click();
    mark(next);
    (next.querySelector(".file-path") || next).focus({ preventScroll: true });
  }

  const opener = document.querySelector("[data-keys-open]");
  if (opener && help) opener.addEventListener("click", () => help.showModal());

  // The topmost file on screen is the current one.
  if ("IntersectionObserver" in window) {
    const visible = new Set();
    const observer = new IntersectionObserver((entries) => {
      entries.forEach((entry) => (entry.isIntersecting ? visible.add(entry.target) : visible.delete(entry.target)));
      // The current file stays while it is still in the top of the screen (a j or k put it there).
      if (current && visible.has(current)) return;
      const top = files().find((file) => visible.has(file));
      if (top && top !== current) mark(top);
    }, { rootMargin: "0px 0px -60% 0px" });
    review.querySelectorAll("[data-file]").forEach((file) => observer.observe(file));
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select, [contenteditable=true], dialog")) {
      if (event.key === "Escape" && event.target.matches("[data-file-filter]")) event.target.blur();
      return;
    }
    if (event.key === "j") go(1);
    else if (event.key === "k") go(-1);
    else if (event.key === "v" && current) {
      const box = current.querySelector("[data-viewed]");
      if (box) box.click();
    } else if (event.key === "t") {
      const filter = review.querySelector("[data-file-filter]");
      if (!filter) return;
      event.preventDefault(); // not a "t" in the field
      filter.focus();
    } else if (event.key === "d" && document.getElementById("decision")) {
      // The decision panel, its first button focused: Tab on to Request changes and Decline.
      const decision = document.getElementById("decision");
      decision.scrollIntoView({ block: "nearest" });
      (decision.querySelector("[data-approve]") || decision).focus();
    } else if (event.key === "?" && help) {
      help.showModal();
    } else return;
    event.preventDefault();
  });
})();
