// The event feed: one websocket per tab for all the person's Rooms, each Room resumed after
// the last sequence seen.
// Event data is untrusted text: callers build DOM with textContent only.
(function () {
  "use strict";
  if (window.osfFeed) return; // included by base.html and, in older pages, by the page too

  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  // One socket per tab follows every Room the person sees (rooms/live/consumers.py
  // PersonEventsConsumer); pages subscribe to a Room, or to all of them.
  const lastByRoom = new Map(); // room id -> last sequence handed to subscribers
  const roomHandlers = new Map(); // room id -> Set of handlers
  const anyHandlers = new Set();
  const frameHandlers = new Set(); // frames without a sequence: feed.rooms, pending.count
  let socket = null;
  let isOpen = false;
  let delay = 1000;

  function setOpen(open) {
    isOpen = open;
    document.documentElement.dataset.feedsOpen = open ? "1" : "0";
  }

  function resume(roomId) {
    if (isOpen && lastByRoom.has(roomId)) {
      socket.send(JSON.stringify({ room_id: roomId, after_sequence: lastByRoom.get(roomId) }));
    }
  }

  function call(handler, value) {
    try {
      handler(value);
    } catch (error) {
      console.error("feed handler failed", error);
    }
  }

  function deliver(event) {
    if (typeof event.sequence !== "number") {
      frameHandlers.forEach((handler) => call(handler, event));
      return;
    }
    const roomId = event.room_id;
    if (!isUuid(roomId) || event.sequence <= (lastByRoom.get(roomId) ?? -1)) return;
    lastByRoom.set(roomId, event.sequence);
    (roomHandlers.get(roomId) || []).forEach((handler) => call(handler, event));
    anyHandlers.forEach((handler) => call(handler, event));
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${scheme}//${location.host}/ws/events/`);
    socket.addEventListener("open", () => {
      setOpen(true);
      delay = 1000;
      lastByRoom.forEach((_last, roomId) => resume(roomId));
    });
    socket.addEventListener("message", (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch (_error) {
        return;
      }
      if (event && typeof event === "object") deliver(event);
    });
    socket.addEventListener("close", (closed) => {
      if (isOpen) setOpen(false);
      // 4401: logged out; retrying cannot help.
      if (closed.code === 4401) return;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    });
  }

  function ensureSocket() {
    if (!socket) connect();
  }

  // A Room's events after `afterSequence`, in order, each once (the API room.js and inbox.js use).
  function openRoomFeed(roomId, afterSequence, onEvent) {
    const handlers = roomHandlers.get(roomId) || new Set();
    roomHandlers.set(roomId, handlers);
    handlers.add(onEvent);
    const after = Number(afterSequence) || 0;
    if (!lastByRoom.has(roomId) || lastByRoom.get(roomId) > after) {
      lastByRoom.set(roomId, after);
      resume(roomId);
    }
    ensureSocket();
    return {
      close() {
        handlers.delete(onEvent);
      },
    };
  }

  // Every event of every Room, live from now; and the frames without a sequence.
  function onAnyEvent(handler) {
    anyHandlers.add(handler);
    ensureSocket();
  }

  function onFrame(handler) {
    frameHandlers.add(handler);
    ensureSocket();
  }

  function isUuid(value) {
    return typeof value === "string" && UUID.test(value);
  }

  // Characters a name may not show as themselves (rooms/content/reveal.py does the same on the server):
  // controls, bidirectional and other invisible format characters, fillers, variation
  // selectors, lone surrogates, noncharacters. They are written as visible ⟨U+…⟩ markers.
  const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Noncharacter_Code_Point}\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5\u180B-\u180D\u180F\u2028\u2029\u2800\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;

  function visibleText(text) {
    return String(text).replace(HIDDEN, (ch) => {
      const hex = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
      return `⟨U+${hex}⟩`;
    });
  }

  // A name from an event, isolated in <bdi> so right-to-left text cannot reorder its row.
  function nameElement(text) {
    const element = document.createElement("bdi");
    element.textContent = visibleText(text || "");
    return element;
  }

  window.osfFeed = { openRoomFeed, onAnyEvent, onFrame, isUuid, visibleText, nameElement };
})();
