// The Room page: the launcher tab bar, kept live from the Room event feed.
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
  const zero = "00000000-0000-0000-0000-000000000000";
  const isOwner = root.dataset.isOwner === "1";
  const states = { queued: "Queued", building: "Building", ready: "Ready", failed: "Failed" };

  function selectTab(tab) {
    launcher.querySelectorAll("[role=tab]").forEach((other) => {
      other.setAttribute("aria-selected", String(other === tab));
    });
    root.dispatchEvent(
      new CustomEvent("launcher:open", { detail: { instanceId: tab.dataset.instanceId, appArea } })
    );
  }
  launcher.addEventListener("click", (event) => {
    const tab = event.target.closest("[role=tab]");
    if (tab) selectTab(tab);
  });

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

  function addApp(event) {
    if (!window.osfFeed.isUuid(event.instance_id) || byInstance(launcher, event.instance_id)) return;
    const position = Number(event.position) || 0;
    const tab = document.createElement("button");
    tab.type = "button";
    tab.className = "tab is-new";
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", "false");
    tab.dataset.instanceId = event.instance_id;
    tab.dataset.position = String(position);
    tab.dataset.buildState = "";
    tab.appendChild(window.osfFeed.nameElement(event.name));
    insertInOrder(launcher, tab, position);

    const row = document.createElement("tr");
    row.dataset.instanceId = event.instance_id;
    row.dataset.position = String(position);
    row.className = "is-new";
    row.appendChild(td(String(position + 1), "num"));
    const name = td("", "strong");
    name.appendChild(window.osfFeed.nameElement(event.name));
    row.appendChild(name);
    const kind = td("");
    const pill = document.createElement("span");
    pill.className = event.kind === "repo" ? "pill pill-repo" : "pill pill-snippet";
    pill.textContent = event.kind === "repo" ? "Repository version" : "Snippet";
    kind.appendChild(pill);
    row.appendChild(kind);
    const stateCell = td("");
    const state = document.createElement("span");
    state.className = "state state-none";
    state.dataset.buildState = "";
    state.textContent = "not deployed";
    stateCell.appendChild(state);
    row.appendChild(stateCell);
    const updated = td("—", "muted small");
    updated.dataset.buildUpdated = "";
    row.appendChild(updated);
    if (isOwner) {
      const actions = td("", "num");
      const form = document.createElement("form");
      form.method = "post";
      form.action = root.dataset.deployUrl.replace(zero, event.instance_id);
      const csrf = document.createElement("input");
      csrf.type = "hidden";
      csrf.name = "csrfmiddlewaretoken";
      csrf.value = root.dataset.csrf || "";
      const button = document.createElement("button");
      button.type = "submit";
      button.className = "button small";
      button.dataset.deploy = "";
      button.textContent = "Deploy";
      form.append(csrf, button);
      actions.appendChild(form);
      row.appendChild(actions);
    }
    appRows.appendChild(row);
    root.querySelectorAll("[data-launcher-empty], [data-apps-empty]").forEach((el) => (el.hidden = true));
  }

  function updateBuild(event) {
    if (!window.osfFeed.isUuid(event.instance_id)) return;
    const label = states[event.build_state] || "not deployed";
    const tab = byInstance(launcher, event.instance_id);
    if (tab) tab.dataset.buildState = String(event.build_state || "");
    const row = byInstance(appRows, event.instance_id);
    if (!row) return;
    const state = row.querySelector("[data-build-state]");
    if (state) {
      state.textContent = label;
      state.className = `state state-${states[event.build_state] ? event.build_state : "none"}`;
    }
    const updated = row.querySelector("[data-build-updated]");
    if (updated) {
      updated.textContent = "just now by ";
      updated.appendChild(window.osfFeed.nameElement(event.by));
    }
  }

  window.osfFeed.openRoomFeed(root.dataset.roomId, root.dataset.afterSequence, (event) => {
    if (event.type === "app.created") addApp(event);
    else if (event.type === "app.deployed") updateBuild(event);
  });
})();
