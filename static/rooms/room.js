// The Room page: the launcher tab bar, kept live from the Room event feed.
//
// Tabs are addresses (/rooms/<id>/apps/<instance_id>/): selecting one updates the URL, a reload
// opens it again. The bar follows the WAI-ARIA tabs pattern: one tab in the Tab order, arrow
// keys and Home/End move between tabs, Enter or Space opens the focused one.
//
// The Room opens the app its person used last here (remembered in this browser, per Room), so
// the page never shows an empty stage; closing an app forgets it.
//
// Hook for the app runtime: selecting a tab dispatches "launcher:open" on the [data-room]
// element with {instanceId, appArea}; the runtime mounts the app into [data-app-area].
(function () {
  "use strict";

  const root = document.querySelector("[data-room]");
  if (!root || !window.osfFeed) return;
  const launcher = root.querySelector("[data-launcher]");
  const appArea = root.querySelector("[data-app-area]");
  const appRows = root.querySelector("[data-app-rows]");
  const updatedNote = root.querySelector("[data-app-updated]");
  const zero = "00000000-0000-0000-0000-000000000000";
  const states = { queued: "Queued", building: "Building", ready: "Ready", failed: "Failed" };
  let openId = null;

  const tabs = () => Array.from(launcher.querySelectorAll("[role=tab]"));
  // Per Room and per person: two people sharing a browser each get their own.
  const person = appArea ? appArea.dataset.userId : "";
  const lastKey = `osf-last-app:${root.dataset.roomId}.user-${person}`;

  function remember(instanceId) {
    try {
      if (instanceId) localStorage.setItem(lastKey, instanceId);
      else localStorage.removeItem(lastKey);
    } catch (_error) {
      // Private mode or full storage: the Room opens with its hint instead.
    }
  }

  function remembered() {
    try {
      return localStorage.getItem(lastKey);
    } catch (_error) {
      return null;
    }
  }
  const appUrl = (instanceId) => root.dataset.appUrl.replace(zero, instanceId);

  function rove(focusable) {
    tabs().forEach((tab) => tab.setAttribute("tabindex", tab === focusable ? "0" : "-1"));
  }

  function selectTab(tab, { push = true, reload = false } = {}) {
    tabs().forEach((other) => other.setAttribute("aria-selected", String(other === tab)));
    rove(tab);
    tab.classList.remove("is-updated");
    openId = tab.dataset.instanceId;
    remember(openId);
    // A Room of many apps scrolls its tab bar: the open one is in view.
    if (tab.scrollIntoView) tab.scrollIntoView({ block: "nearest", inline: "nearest" });
    if (updatedNote) updatedNote.hidden = true;
    if (push && location.pathname !== new URL(tab.href).pathname) {
      history.pushState({ instanceId: openId }, "", tab.href);
    }
    root.dispatchEvent(
      new CustomEvent("launcher:open", { detail: { instanceId: openId, appArea, reload } })
    );
  }

  function deselect() {
    tabs().forEach((tab) => tab.setAttribute("aria-selected", "false"));
    rove(tabs()[0]);
    openId = null;
  }

  launcher.addEventListener("click", (event) => {
    const tab = event.target.closest("[role=tab]");
    if (!tab || event.ctrlKey || event.metaKey || event.shiftKey) return; // a new window: a link
    event.preventDefault();
    selectTab(tab);
  });

  // The Apps table's names open their tab on this page, as the tab bar does.
  appRows.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-app-name]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const tab = byInstance(launcher, link.closest("tr").dataset.instanceId);
    if (!tab) return;
    event.preventDefault();
    selectTab(tab);
  });

  launcher.addEventListener("keydown", (event) => {
    const list = tabs();
    const index = list.indexOf(document.activeElement);
    if (index < 0) return;
    const moves = {
      ArrowLeft: index - 1,
      ArrowRight: index + 1,
      Home: 0,
      End: list.length - 1,
    };
    if (event.key in moves) {
      event.preventDefault();
      const next = list[(moves[event.key] + list.length) % list.length];
      rove(next);
      next.focus();
    } else if (event.key === " " || event.key === "Enter") {
      event.preventDefault();
      selectTab(list[index]);
    }
  });

  function openFromUrl() {
    const wanted = tabs().find((tab) => new URL(tab.href).pathname === location.pathname);
    if (wanted) selectTab(wanted, { push: false });
    else {
      if (openId) root.dispatchEvent(new CustomEvent("launcher:close", { detail: { instanceId: openId } }));
      deselect();
    }
  }
  window.addEventListener("popstate", openFromUrl);
  root.addEventListener("launcher:closed", () => {
    deselect();
    remember(null);
    if (location.pathname !== root.dataset.roomUrl) history.pushState({}, "", root.dataset.roomUrl);
  });
  if (updatedNote) {
    updatedNote.querySelector("[data-app-reload]").addEventListener("click", () => {
      const tab = byInstance(launcher, openId);
      if (tab) selectTab(tab, { push: false, reload: true });
    });
  }

  function byInstance(container, instanceId) {
    return Array.from(container.children).find((el) => el.dataset.instanceId === instanceId);
  }

  function insertInOrder(container, element, position) {
    const after = Array.from(container.children).find(
      (el) => Number(el.dataset.position) > position
    );
    container.insertBefore(element, after || null);
  }

  function td(text, className) {
    const cell = document.createElement("td");
    if (className) cell.className = className;
    cell.textContent = text;
    return cell;
  }

  // "All N apps": shown while the tab bar scrolls, so a Room of many apps says it has more.
  const allApps = root.querySelector("[data-launcher-all]");
  function syncOverflow() {
    if (!allApps) return;
    allApps.querySelector("[data-app-count]").textContent = String(tabs().length);
    allApps.hidden = launcher.scrollWidth <= launcher.clientWidth + 1;
  }
  if (allApps && window.ResizeObserver) new ResizeObserver(syncOverflow).observe(launcher);

  function syncEmpty() {
    syncOverflow();
    const empty = tabs().length === 0;
    root.querySelectorAll("[data-launcher-empty]").forEach((el) => (el.hidden = !empty));
    root.querySelectorAll("[data-apps-section], [data-app-runtime]").forEach((el) => (el.hidden = empty));
  }

  function addApp(event) {
    if (!window.osfFeed.isUuid(event.instance_id) || byInstance(launcher, event.instance_id)) return;
    const position = Number(event.position) || 0;
    const tab = document.createElement("a");
    tab.className = "tab is-new";
    tab.href = appUrl(event.instance_id);
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", "false");
    tab.setAttribute("tabindex", tabs().length ? "-1" : "0");
    tab.dataset.instanceId = event.instance_id;
    tab.dataset.position = String(position);
    tab.dataset.revision = String(event.revision || 1);
    tab.dataset.buildState = String(event.build_state || "");
    tab.appendChild(window.osfFeed.nameElement(event.name));
    insertInOrder(launcher, tab, position);
    syncEmpty();
    // The Apps table shows a page of the apps: a new one joins only the last page's rows.
    if (!("lastPage" in appRows.dataset)) {
      syncTable();
      return;
    }

    const row = document.createElement("tr");
    row.dataset.instanceId = event.instance_id;
    row.dataset.position = String(position);
    row.className = "is-new";
    const number = td("", "num");
    row.appendChild(number);
    const name = td("", "strong");
    const open = document.createElement("a");
    open.href = tab.href;
    open.dataset.appName = "";
    open.appendChild(window.osfFeed.nameElement(event.name));
    name.appendChild(open);
    row.appendChild(name);
    const kind = td("");
    const pill = document.createElement("span");
    pill.className = event.kind === "repo" ? "pill pill-repo" : "pill pill-snippet";
    pill.textContent = event.kind === "repo" ? "Repository version" : "Snippet";
    kind.appendChild(pill);
    row.appendChild(kind);
    const revision = td("");
    const history = document.createElement("a");
    history.href = `${appUrl(event.instance_id)}revisions/`;
    history.dataset.revisionLink = "";
    history.textContent = `v${event.revision || 1}`;
    revision.appendChild(history);
    row.appendChild(revision);
    const stateCell = td("");
    const state = document.createElement("span");
    const known = states[event.build_state] ? event.build_state : "none";
    state.className = `state state-${known}`;
    state.dataset.buildState = "";
    state.textContent = states[event.build_state] || "not checked";
    stateCell.appendChild(state);
    row.appendChild(stateCell);
    if (root.dataset.isOwner === "1") {
      // The tab's actions need this page's forms: a reload shows them.
      const actions = td("", "muted small");
      const link = document.createElement("a");
      link.href = root.dataset.roomUrl + location.search;
      link.textContent = "Reload to manage";
      actions.appendChild(link);
      row.appendChild(actions);
    }
    insertInOrder(appRows, row, position);
    syncTable();
  }

  // The table's rows are numbered through the Room, as the tab bar orders every app: after a
  // tab comes, goes or moves, each row takes its tab's place, and the pager says what the rows
  // on screen now are (which apps a page holds changes on the next load).
  function syncTable() {
    const places = new Map(tabs().map((tab, index) => [tab.dataset.instanceId, index + 1]));
    const shown = [];
    Array.from(appRows.children).forEach((row) => {
      const place = places.get(row.dataset.instanceId);
      const number = row.querySelector(".num");
      if (!place || !number) return;
      number.textContent = String(place);
      shown.push(place);
    });
    const summary = root.querySelector("[data-pager-summary]");
    if (!summary) return;
    const total = `${places.size} app${places.size === 1 ? "" : "s"}`;
    summary.textContent = shown.length ? `${Math.min(...shown)}–${Math.max(...shown)} of ${total}` : total;
  }

  function setName(instanceId, name) {
    const tab = byInstance(launcher, instanceId);
    if (tab) tab.replaceChildren(window.osfFeed.nameElement(name));
    const cell = byInstance(appRows, instanceId)?.querySelector("[data-app-name]");
    if (cell) cell.replaceChildren(window.osfFeed.nameElement(name));
  }

  function updateApp(event) {
    const tab = byInstance(launcher, event.instance_id);
    if (!tab) return;
    setName(event.instance_id, event.name);
    tab.dataset.revision = String(event.revision);
    const link = byInstance(appRows, event.instance_id)?.querySelector("[data-revision-link]");
    if (link) link.textContent = `v${event.revision}`;
    // An open app is never yanked: its person chooses when to run the new revision.
    if (event.instance_id === openId && updatedNote) updatedNote.hidden = false;
    else tab.classList.add("is-updated");
  }

  function removeApp(event) {
    const tab = byInstance(launcher, event.instance_id);
    if (!tab) return;
    if (event.instance_id === openId) {
      root.dispatchEvent(new CustomEvent("launcher:close", { detail: { instanceId: openId } }));
      deselect();
      history.replaceState({}, "", root.dataset.roomUrl);
    }
    tab.remove();
    byInstance(appRows, event.instance_id)?.remove();
    if (!launcher.querySelector("[tabindex='0']")) rove(tabs()[0]);
    syncEmpty();
    syncTable();
  }

  function reorder(event) {
    if (!Array.isArray(event.order)) return;
    event.order.forEach((instanceId, index) => {
      [launcher, appRows].forEach((container) => {
        const el = byInstance(container, instanceId);
        if (!el) return;
        el.dataset.position = String(index);
        container.appendChild(el);
      });
    });
    syncTable();
  }

  window.osfFeed.openRoomFeed(root.dataset.roomId, root.dataset.afterSequence, (event) => {
    if (event.type === "app.created" || event.type === "app.restored") addApp(event);
    else if (event.type === "app.updated" || event.type === "app.rolled_back") updateApp(event);
    else if (event.type === "app.removed") removeApp(event);
    else if (event.type === "app.moved") reorder(event);
    else if (event.type === "app.renamed") setName(event.instance_id, event.name);
  });

  rove(tabs().find((tab) => tab.getAttribute("aria-selected") === "true") || tabs()[0]);
  // After every deferred script: the runtime (launcher.js) listens for "launcher:open" by then.
  if (root.dataset.openInstanceId) document.addEventListener("DOMContentLoaded", openFromUrl);
  else {
    const last = byInstance(launcher, remembered());
    if (last) {
      document.addEventListener("DOMContentLoaded", () => {
        history.replaceState({ instanceId: last.dataset.instanceId }, "", last.href);
        selectTab(last, { push: false });
      });
    }
  }
})();
