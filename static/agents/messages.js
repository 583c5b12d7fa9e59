// The console's Messages: live updates over the person's websocket (/ws/messages/), unread
// badges, and the composer's mention highlighting with the browser copy of the server's rule
// (static/agents/mentions.js). Frames carry ids only; messages are fetched as server-rendered
// HTML through the same access checks as the page.
(function () {
  "use strict";

  const root = document.querySelector("[data-messages]");
  if (!root) return;
  const list = root.querySelector("[data-message-list]");
  const isLive = root.hasAttribute("data-live") && list;
  const conversation = root.dataset.conversation || "";
  const threadRoot = root.dataset.threadRoot || "";
  let pending = Promise.resolve();

  function lastMessageId() {
    const items = list.querySelectorAll("[data-message-id]");
    return items.length ? items[items.length - 1].dataset.messageId : "";
  }

  function fetchMissing(key) {
    // One fetch at a time, each after the last message shown: nothing is inserted twice.
    pending = pending.then(async () => {
      const url = `${root.dataset.liveUrl}?conversation=${encodeURIComponent(key)}&after=${encodeURIComponent(lastMessageId())}`;
      const response = await fetch(url, { credentials: "same-origin" });
      if (!response.ok) return;
      const holder = document.createElement("template");
      holder.innerHTML = await response.text();
      for (const item of Array.from(holder.content.querySelectorAll("[data-message-id]"))) {
        if (!document.getElementById(item.id)) {
          item.classList.add("is-new");
          list.appendChild(item);
        }
      }
      const empty = root.querySelector("[data-empty-state]");
      if (empty) empty.hidden = true;
    }).catch((error) => console.error("could not load new messages", error));
  }

  function bumpBadge(key) {
    let link = root.querySelector(`[data-conversation="${CSS.escape(key)}"]`);
    if (!link && key.startsWith("thread:")) link = addThreadLink(key);
    const badge = link && link.querySelector("[data-unread]");
    if (!badge || badge.textContent.endsWith("+")) return;
    const count = (parseInt(badge.textContent, 10) || 0) + 1;
    badge.textContent = count > 99 ? "99+" : String(count);
    badge.classList.remove("is-zero");
  }

  function addThreadLink(key) {
    const threads = root.querySelector("[data-threads]");
    if (!threads) return null;
    const none = threads.querySelector("[data-no-threads]");
    if (none) none.remove();
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = root.dataset.threadUrl.replace("00000000-0000-0000-0000-000000000000", key.slice(7));
    link.dataset.conversation = key;
    const name = document.createElement("span");
    name.className = "conv-name";
    name.textContent = "New direct thread";
    const badge = document.createElement("span");
    badge.className = "badge is-zero";
    badge.dataset.unread = "";
    badge.textContent = "0";
    link.append(name, badge);
    item.appendChild(link);
    threads.prepend(item);
    return link;
  }

  function onSignal(signal) {
    const inThisThread = threadRoot && signal.thread_root_id === threadRoot;
    if (isLive && inThisThread) {
      fetchMissing(`thread:${threadRoot}`);
      return;
    }
    if (isLive && !threadRoot && signal.conversation === conversation) {
      if (signal.is_reply) {
        const count = list.querySelector(`[data-message-id="${CSS.escape(signal.thread_root_id)}"] [data-reply-count]`);
        if (count) count.textContent = String((parseInt(count.textContent, 10) || 0) + 1);
      } else {
        fetchMissing(conversation);
      }
      return;
    }
    bumpBadge(signal.conversation);
  }

  function connect(delay) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/ws/messages/`);
    socket.addEventListener("open", () => {
      delay = 1000;
      document.documentElement.dataset.messagesFeed = "open";
      // Whatever arrived while the socket was down.
      if (isLive) fetchMissing(threadRoot ? `thread:${threadRoot}` : conversation);
    });
    socket.addEventListener("message", (message) => {
      try {
        onSignal(JSON.parse(message.data));
      } catch (error) {
        console.error("bad messages frame", error);
      }
    });
    socket.addEventListener("close", (closed) => {
      delete document.documentElement.dataset.messagesFeed;
      if (closed.code === 4401) return;
      setTimeout(() => connect(Math.min(delay * 2, 30000)), delay);
    });
  }

  connect(1000);

  // ---- The composer -----------------------------------------------------------------------
  const form = root.querySelector("[data-composer]");
  if (!form || !window.osfMentions) return;
  const body = form.querySelector("[data-composer-body]");
  const to = form.querySelector("[data-composer-to]");
  const preview = form.querySelector("[data-mention-preview]");
  const addressed = form.querySelector("[data-addressed]");
  const knownElement = document.getElementById("known-handles");
  const known = knownElement ? JSON.parse(knownElement.textContent) : {};
  const myHandle = (root.querySelector("[data-my-handle]")?.textContent || "").replace(/^@/, "");

  function parseTo(text) {
    const handles = [];
    for (const part of text.trim().split(/[\s,;]+/)) {
      const handle = part.replace(/^@/, "").toLowerCase();
      if (handle && !handles.includes(handle)) handles.push(handle);
    }
    return handles;
  }

  function renderPreview() {
    const text = body.value;
    const spans = window.osfMentions.mentionSpans(text);
    preview.replaceChildren();
    let at = 0;
    for (const [start, end, handle] of spans) {
      preview.append(text.slice(at, start));
      const mark = document.createElement("mark");
      mark.dataset.handle = handle;
      mark.className = handle in known ? "mention" : "mention is-unknown";
      mark.textContent = text.slice(start, end);
      preview.append(mark);
      at = end;
    }
    preview.append(text.slice(at));
    preview.hidden = spans.length === 0;
    renderAddressed(spans.map((span) => span[2]));
  }

  function addressedItem(handle, how) {
    const item = document.createElement("li");
    item.dataset.addressedHandle = handle;
    const name = document.createElement("span");
    name.className = "agent";
    name.textContent = `@${handle}`;
    const info = known[handle];
    let state;
    if (handle === myHandle) state = "that is you: skipped";
    else if (!info) state = "no agent you can reach here has this handle: skipped";
    else if (info.presence === "person") state = "a person";
    else state = info.presence;
    item.append(name, ` ${how} · ${state}`);
    if (!info || handle === myHandle) item.className = "is-skipped";
    return item;
  }

  function renderAddressed(mentioned) {
    const direct = parseTo(to ? to.value : "");
    addressed.replaceChildren();
    for (const handle of direct) addressed.append(addressedItem(handle, "addressed (To)"));
    for (const handle of mentioned) {
      if (!direct.includes(handle)) addressed.append(addressedItem(handle, "mentioned: sees it, not woken"));
    }
  }

  body.addEventListener("input", renderPreview);
  if (to) to.addEventListener("input", renderPreview);
  renderPreview();

  form.addEventListener("submit", (event) => {
    const button = form.querySelector("[data-send]");
    // The key in the form makes a second submit a replay on the server; this spares the trip.
    if (form.dataset.sending) {
      event.preventDefault();
      return;
    }
    form.dataset.sending = "1";
    if (button) button.disabled = true;
  });
})();
