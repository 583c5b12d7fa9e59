// The new token's Copy button: the secret is on the page once, so copying it must be easy.
(function () {
  "use strict";
  const button = document.querySelector("[data-copy-token]");
  if (!button) return;
  const secret = document.querySelector("[data-token-secret]");
  const status = document.querySelector("[data-copy-status]");
  button.addEventListener("click", async function () {
    try {
      await navigator.clipboard.writeText(secret.textContent.trim());
      status.textContent = "Copied. Paste it where your agent keeps its secrets.";
      button.textContent = "Copied";
    } catch (error) {
      // No clipboard (an insecure origin, a denied permission): select it to copy by hand.
      window.getSelection().selectAllChildren(secret);
      status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
    }
  });
})();
