// The Room event feed: one websocket per Room, resumed after the last sequence seen.
// Event data is untrusted text: callers build DOM with textContent only.
(function () {
  "use strict";

  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  let openCount = 0;

  function setOpenCount(delta) {
    openCount += delta;
    document.documentElement.dataset.feedsOpen = String(openCount);
  }

  function openRoomFeed(roomId, afterSequence, onEvent) {
    let last = Number(afterSequence) || 0;
    let delay = 1000;
    let socket = null;
    let stopped = false;

    function connect() {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const url = `${scheme}//${location.host}/ws/rooms/${encodeURIComponent(roomId)}/events/?after_sequence=${last}`;
      let isOpen = false;
      socket = new WebSocket(url);
      socket.addEventListener("open", () => {
        isOpen = true;
        delay = 1000;
        setOpenCount(1);
      });
      socket.addEventListener("message", (message) => {
        let event;
        try {
          event = JSON.parse(message.data);
        } catch (_error) {
          return;
        }
        if (!event || typeof event.sequence !== "number" || event.sequence <= last) return;
        last = event.sequence;
        try {
          onEvent(event);
        } catch (error) {
          console.error("room event handler failed", error);
        }
      });
      socket.addEventListener("close", (closed) => {
        if (isOpen) setOpenCount(-1);
        // 4401 / 4404: logged out or no longer in the Room; retrying cannot help.
        if (stopped || closed.code === 4401 || closed.code === 4404) return;
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      });
    }

    connect();
    return {
      close() {
        stopped = true;
        if (socket) socket.close();
      },
    };
  }

  function isUuid(value) {
    return typeof value === "string" && UUID.test(value);
  }

  // Characters a name may not show as themselves (rooms/reveal.py does the same on the server):
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

  window.osfFeed = { openRoomFeed, isUuid, visibleText, nameElement };
})();
