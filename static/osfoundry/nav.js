// The navigation on a narrow screen: one "Menu" button opens and closes it (templates/base.html).
// Without this script the navigation stays open, wrapped under the brand; with it, a phone sees
// the brand, the menu button and the account menu on one line. Escape closes the menu, and so
// does a click outside it.
(function () {
  "use strict";

  const toggle = document.querySelector("[data-nav-toggle]");
  const nav = document.querySelector("[data-nav]");
  if (!toggle || !nav) return;
  document.documentElement.classList.add("has-navmenu");
  toggle.hidden = false;

  function setOpen(open) {
    toggle.setAttribute("aria-expanded", String(open));
    nav.toggleAttribute("data-open", open);
  }

  toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && nav.hasAttribute("data-open")) {
      setOpen(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (nav.hasAttribute("data-open") && !nav.contains(event.target) && !toggle.contains(event.target)) {
      setOpen(false);
    }
  });
})();
