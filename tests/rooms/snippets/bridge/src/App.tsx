// Talks to the parent's storage bridge directly, skipping the frame runtime's own
// checks, to prove the parent validates every request itself.
import { useEffect, useState } from "react";

const REQUESTS: Record<string, object> = {
  "long-key": { op: "set", key: "k".repeat(201), value: 1 },
  "empty-key": { op: "get", key: "" },
  "number-key": { op: "get", key: 42 },
  "bad-op": { op: "clear" },
  "too-big": { op: "set", key: "big", value: "x".repeat(100 * 1024 + 1) },
  "not-json": { op: "set", key: "fn", value: undefined },
  "ok-max-key": { op: "set", key: "k".repeat(200), value: { fine: true } },
};

export default function App() {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  useEffect(() => {
    function onMessage(event: MessageEvent) {
      const d = event.data;
      if (event.source !== window.parent || !d || d.type !== "osf:storage-result") return;
      setAnswers((a) => ({ ...a, [d.id]: d.ok ? "ok" : "error: " + d.error }));
    }
    window.addEventListener("message", onMessage);
    for (const [id, req] of Object.entries(REQUESTS)) {
      window.parent.postMessage({ type: "osf:storage", id, ...req }, "*");
    }
    return () => window.removeEventListener("message", onMessage);
  }, []);
  return (
    <ul>
      {Object.keys(REQUESTS).map((id) => (
        <li key={id} data-id={id}>{id}: {answers[id] || "waiting"}</li>
      ))}
    </ul>
  );
}
