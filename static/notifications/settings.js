// The desktop notifications switch: a choice of this browser, kept by rooms/notify.js.
(function () {
  "use strict";

  const state = document.querySelector("[data-desktop-state]");
  const toggle = document.querySelector("[data-desktop-toggle]");
  const desktop = window.osfDesktopNotifications;
  if (!state || !toggle) return;

  function show() {
    if (!desktop || !("Notification" in window)) {
      state.textContent = "This browser does not offer desktop notifications.";
      toggle.hidden = true;
      return;
    }
    if (Notification.permission === "denied") {
      state.textContent = "Blocked in this browser's site settings; allow notifications there first.";
      toggle.hidden = true;
      return;
    }
    const isOn = desktop.isOn();
    state.textContent = isOn ? "On in this browser." : "Off in this browser.";
    toggle.textContent = isOn ? "Turn off" : "Turn on";
    toggle.hidden = false;
  }

  toggle.addEventListener("click", async () => {
    if (desktop.isOn()) desktop.turnOff();
    else await desktop.turnOn();
    show();
  });
  show();
})();
