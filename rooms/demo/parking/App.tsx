import { useState } from "react";
import "./styles.css";

export default function App() {
  const [topic, setTopic] = useState("");
  const [topics, setTopics] = useState<string[]>([]);

  function add() {
    setTopics([...topics, topic]);
    setTopic("");
  }

  return (
    <main className="parking">
      <h1>Parking lot</h1>
      <p className="hint">Topics that ran long at standup, for after it.</p>
      <div className="add">
        <input value={topic} onChange={(e) => setTopic(e.target.value)} placeholder="A topic" />
        <button onClick={add}>Add</button>
      </div>
      <ul>
        {topics.map((t, i) => (
          <li key={i}>{t}</li>
        ))}
      </ul>
    </main>
  );
}
