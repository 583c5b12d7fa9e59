// On every console page: the pending count in the nav badge and the page title, live, and
// (opted in on the notifications settings page) a desktop notification per new proposal.
(function () {
  "use strict";

  if (!window.osfFeed) return;
  const COUNT_PREFIX = /^\(\d+\) /;
  const STORAGE_KEY = "osf-desktop-notifications";
  let owned = new Set();

  function showCount(count) {
    document.querySelectorAll("[data-pending-count]").forEach((badge) => {
      badge.textContent = String(count);
      badge.classList.toggle("is-zero", count === 0);
    });
    const title = document.title.replace(COUNT_PREFIX, "");
    document.title = count > 0 ? `(${count}) ${title}` : title;
    document.documentElement.dataset.pendingTotal = String(count);
  }

  function wantsDesktop() {
    try {
      return (
        window.localStorage.getItem(STORAGE_KEY) === "on" &&
        "Notification" in window &&
        Notification.permission === "granted"
      );
    } catch (_error) {
      return false;
    }
  }

  // A Room joined after the page loaded is replayed from its start (inbox.js): what is older
  // than this is history, not news.
  const NEWS_MS = 10 * 60 * 1000;

  function isNews(event) {
    const created = Date.parse(event.created_at);
    return !Number.isFinite(created) || Date.now() - created < NEWS_MS;
  }

  function notifyDesktop(event) {
    if (!wantsDesktop() || !window.osfFeed.isUuid(event.proposal_id) || !isNews(event)) return;
    const text = window.osfFeed.visibleText;
    // The tag collapses the same proposal shown by several open tabs into one notification.
    const note = new Notification(`New proposal: ${text(event.name)}`, {
      body: `${text(event.agent || event.proposed_by || "An agent")} asks for your approval.`,
      tag: `proposal-${event.proposal_id}`,
    });
    note.addEventListener("click", () => {
      window.focus();
      location.href = `/proposals/${event.proposal_id}/`;
    });
  }

  window.osfFeed.onFrame((frame) => {
    if (frame.type === "pending.count" && Number.isInteger(frame.count)) showCount(frame.count);
    if (frame.type === "feed.rooms" && Array.isArray(frame.owned)) owned = new Set(frame.owned);
  });
  window.osfFeed.onAnyEvent((event) => {
    if (event.type === "proposal.created" && owned.has(event.room_id) && event.name !== undefined) {
      notifyDesktop(event);
    }
  });

  window.osfDesktopNotifications = {
    isOn: wantsDesktop,
    async turnOn() {
      if (!("Notification" in window)) return "unsupported";
      const permission = await Notification.requestPermission();
      if (permission === "granted") window.localStorage.setItem(STORAGE_KEY, "on");
      return permission;
    },
    turnOff() {
      window.localStorage.removeItem(STORAGE_KEY);
    },
  };
})();
