// "Needs your approval": new proposals appear live (within the filters); decided ones move to
// "Recently decided". The count in the title and badge comes from the feed (notify.js). Rows
// that share a name say what differs (revision, time, size, content hash), as the server does.
(function () {
  "use strict";

  const table = document.querySelector("[data-inbox]");
  if (!table || !window.osfFeed) return;
  const rows = table.querySelector("[data-pending-rows]");
  const emptyState = document.querySelector("[data-empty-state]");
  const zero = "00000000-0000-0000-0000-000000000000";
  const kinds = { snippet: "Snippet", repo: "Repository version" };
  const outcomes = {
    approved: "Approved",
    declined: "Declined",
    changes_requested: "Changes requested",
  };
  const decidedRows = document.querySelector("[data-decided-rows]");
  const DECIDED_SHOWN = 20; // as many as the page shows (rooms/review/inbox.py RECENTLY_DECIDED)
  const decidedEmpty = document.querySelector("[data-decided-empty]");

  function formatSize(bytes) {
    if (typeof bytes !== "number") return "";
    if (bytes < 1024) return `${bytes} byte${bytes === 1 ? "" : "s"}`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
    return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  }

  function cell(text, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    return td;
  }

  function findRow(proposalId) {
    return Array.from(rows.children).find((row) => row.dataset.proposalId === proposalId);
  }

  function syncEmptyState() {
    if (emptyState) emptyState.hidden = rows.children.length > 0;
    showDifferences();
  }

  function differences(row) {
    const detail = document.createElement("span");
    detail.className = "row-detail";
    detail.dataset.rowDetail = "";
    const when = new Date(row.dataset.created);
    const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    const pad = (n) => String(n).padStart(2, "0");
    const time = Number.isNaN(when.getTime())
      ? ""
      : `${month[when.getUTCMonth()]} ${when.getUTCDate()}, ${pad(when.getUTCHours())}:${pad(when.getUTCMinutes())} UTC · `;
    const hash = document.createElement("code");
    hash.textContent = row.dataset.hash || "";
    detail.append(`revision ${row.dataset.revision || 1} · ${time}${formatSize(Number(row.dataset.bytes))} · content `, hash);
    return detail;
  }

  function showDifferences() {
    const counts = new Map();
    Array.from(rows.children).forEach((row) => counts.set(row.dataset.name, (counts.get(row.dataset.name) || 0) + 1));
    Array.from(rows.children).forEach((row) => {
      const detail = row.querySelector("[data-row-detail]");
      const shared = counts.get(row.dataset.name) > 1;
      if (shared && !detail && row.cells[2]) row.cells[2].appendChild(differences(row));
      else if (!shared && detail) detail.remove();
    });
  }

  // Pages after the first hold older proposals: a new one belongs on the first.
  const isFirstPage = (table.dataset.page || "1") === "1";

  function addRow(roomName, event) {
    if (!isFirstPage) return;
    if (!window.osfFeed.isUuid(event.proposal_id) || findRow(event.proposal_id)) return;
    const row = document.createElement("tr");
    row.dataset.proposalId = event.proposal_id;
    row.className = "is-new";
    row.dataset.name = typeof event.name === "string" ? event.name : "";
    row.dataset.revision = String(Number.isInteger(event.revision) ? event.revision : 1);
    row.dataset.created = typeof event.created_at === "string" ? event.created_at : "";
    row.dataset.bytes = String(typeof event.total_bytes === "number" ? event.total_bytes : "");
    row.dataset.hash = typeof event.content_hash === "string" ? event.content_hash.slice(0, 8) : "";
    const room = cell("");
    room.appendChild(window.osfFeed.nameElement(roomName));
    row.appendChild(room);
    const agent = cell("");
    // As the server renders it ({% proposer %}): the agent's handle, then the token's or
    // client's name; the user name when the proposal came without a token.
    const agentName = document.createElement("span");
    agentName.className = "agent";
    agentName.appendChild(window.osfFeed.nameElement(event.agent || event.proposed_by));
    agent.appendChild(agentName);
    if (event.proposed_via) {
      const via = document.createElement("span");
      via.className = "via";
      via.append(" · ", window.osfFeed.nameElement(event.proposed_via));
      agent.appendChild(via);
    }
    row.appendChild(agent);
    const name = cell("");
    const link = document.createElement("a");
    link.className = "strong";
    link.href = table.dataset.cardUrl.replace(zero, event.proposal_id);
    link.appendChild(window.osfFeed.nameElement(event.name));
    name.appendChild(link);
    const labels = [];
    if (Number.isInteger(event.base_revision)) labels.push(`update of v${event.base_revision}`);
    if (window.osfFeed.isUuid(event.previous_proposal_id)) labels.push("revision");
    labels.forEach((text) => {
      const label = document.createElement("span");
      label.className = "muted small";
      label.textContent = ` ${text}`;
      name.appendChild(label);
    });
    row.appendChild(name);
    const kind = cell("");
    const pill = document.createElement("span");
    pill.className = event.kind === "repo" ? "pill pill-repo" : "pill pill-snippet";
    pill.textContent = kinds[event.kind] || String(event.kind || "");
    kind.appendChild(pill);
    row.appendChild(kind);
    row.appendChild(cell(String(event.file_count ?? ""), "num"));
    row.appendChild(cell(formatSize(event.total_bytes), "num"));
    row.appendChild(cell("just now", "num"));
    rows.prepend(row);
    syncEmptyState();
  }

  function removeRow(proposalId) {
    const row = findRow(proposalId);
    if (!row) return null;
    row.remove();
    syncEmptyState();
    return row;
  }

  // A decided row moves to "Recently decided": its Room, agent and name cells come along.
  function addDecided(pendingRow, event) {
    if (!decidedRows || !pendingRow) return;
    const row = document.createElement("tr");
    row.dataset.proposalId = event.proposal_id;
    row.className = "is-new";
    Array.from(pendingRow.children)
      .slice(0, 3)
      .forEach((td) => {
        const copy = td.cloneNode(true);
        copy.querySelectorAll(".muted, [data-row-detail]").forEach((label) => label.remove());
        row.appendChild(copy);
      });
    const outcome = cell("");
    const pill = document.createElement("span");
    const status = event.type.replace("proposal.", "");
    pill.className = `pill pill-outcome-${status}`;
    pill.dataset.outcome = "";
    pill.textContent = outcomes[status];
    outcome.appendChild(pill);
    row.appendChild(outcome);
    const by = cell("");
    by.appendChild(window.osfFeed.nameElement(event.decided_by));
    row.appendChild(by);
    row.appendChild(cell("just now", "num"));
    decidedRows.prepend(row);
    while (decidedRows.children.length > DECIDED_SHOWN) decidedRows.lastElementChild.remove();
    if (decidedEmpty) decidedEmpty.hidden = true;
  }

  function matchesFilters(roomId, agent) {
    const room = table.dataset.filterRoom;
    const wanted = table.dataset.filterAgent;
    return (!room || room === roomId) && (!wanted || wanted === agent);
  }

  const followed = new Set();

  function follow(roomId, roomName, afterSequence) {
    if (followed.has(roomId)) return;
    followed.add(roomId);
    window.osfFeed.openRoomFeed(roomId, afterSequence, (event) => {
      if (event.type === "proposal.created" && event.name !== undefined) {
        // A revision takes its earlier revision's place: one entry per line of work.
        if (window.osfFeed.isUuid(event.previous_proposal_id)) removeRow(event.previous_proposal_id);
        if (matchesFilters(event.room_id, event.proposed_by)) addRow(roomName, event);
      } else if (Object.hasOwn(outcomes, event.type.replace("proposal.", ""))) {
        addDecided(removeRow(event.proposal_id), event);
      }
    });
  }

  document.querySelectorAll("[data-room-feed]").forEach((room) => {
    follow(room.dataset.roomId, room.dataset.roomName || "", room.dataset.afterSequence);
  });
  // A Room the person came to own after this page loaded: its whole history, so its pending
  // proposals appear and its decided ones land in Recently decided.
  window.osfFeed.onFrame((frame) => {
    if (frame.type !== "feed.rooms" || !Array.isArray(frame.joined)) return;
    const owned = new Set(Array.isArray(frame.owned) ? frame.owned : []);
    frame.joined.forEach((room) => {
      if (room && window.osfFeed.isUuid(room.room_id) && owned.has(room.room_id)) {
        follow(room.room_id, typeof room.name === "string" ? room.name : "", 0);
      }
    });
  });
})();
