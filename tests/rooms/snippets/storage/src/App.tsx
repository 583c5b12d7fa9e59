import { useState } from "react";

const storage = (window as any).osfoundry.storage;

export default function App() {
  const [log, setLog] = useState<string[]>([]);
  const add = (line: string) => setLog((l) => [...l, line]);

  async function roundTrip() {
    try {
      await storage.set("notes", { text: "Buy milk", count: 3 });
      const back = await storage.get("notes");
      add("get: " + JSON.stringify(back));
      add("keys: " + JSON.stringify(await storage.keys()));
      add("missing: " + JSON.stringify(await storage.get("nope")));
      await storage.remove("notes");
      add("after remove: " + JSON.stringify(await storage.get("notes")));
      await storage.set("kept", [1, 2, 3]);
      add("done");
    } catch (err) {
      add("error: " + (err as Error).message);
    }
  }

  async function tooBig() {
    try {
      await storage.set("big", "x".repeat(200 * 1024));
      add("big: stored");
    } catch (err) {
      add("big: " + (err as Error).message);
    }
  }

  return (
    <div>
      <button onClick={roundTrip}>Round trip</button>
      <button onClick={tooBig}>Too big</button>
      <ul>{log.map((line, i) => <li key={i}>{line}</li>)}</ul>
    </div>
  );
}
