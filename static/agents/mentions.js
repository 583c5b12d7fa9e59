// The @mention rule, the browser copy of agents/mentions.py (the server's): a body mentions
// `handle` when `@handle` has no word character, dot or hyphen before the `@` and no word
// character or hyphen after it; case does not matter. No `u` flag: with it and `i`, `\w`
// would also match U+017F and U+212A, which Python's re.ASCII does not. Both copies are run
// against one table of cases, agents/mention_cases.json (pytest and Chromium).
(function () {
  "use strict";

  const CANDIDATES = /@([A-Za-z0-9][A-Za-z0-9-]{1,30})/g;

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }

  function mentionPattern(handle, flags) {
    return new RegExp(`(?<![\\w.-])@${escapeRegExp(handle)}(?![\\w-])`, flags || "i");
  }

  function bodyMentionsHandle(body, handle) {
    return mentionPattern(handle).test(body);
  }

  // The handles `body` mentions, lowercased, in order of first appearance (mentioned_handles).
  function mentionedHandles(body) {
    const found = [];
    for (const match of body.matchAll(CANDIDATES)) {
      const handle = match[1].toLowerCase();
      if (!found.includes(handle) && bodyMentionsHandle(body, handle)) found.push(handle);
    }
    return found;
  }

  // [start, end, handle] of every mention, in order, for highlighting.
  function mentionSpans(body) {
    const spans = [];
    for (const handle of mentionedHandles(body)) {
      for (const match of body.matchAll(mentionPattern(handle, "gi"))) {
        spans.push([match.index, match.index + match[0].length, handle]);
      }
    }
    return spans.sort((a, b) => a[0] - b[0]);
  }

  window.osfMentions = { bodyMentionsHandle, mentionedHandles, mentionSpans };
})();
