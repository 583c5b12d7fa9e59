import { useEffect, useState } from "react";
import "./styles.css";

type Person = { name: string; seconds: number };

const TEAM: Person[] = [
  { name: "Ada", seconds: 90 },
  { name: "Grace", seconds: 90 },
  { name: "Linus", seconds: 90 },
  { name: "Margaret", seconds: 90 },
];

function format(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return `${m}:${s.toString().padStart(2, "0")}`;
}

export default function App() {
  const [index, setIndex] = useState(0);
  const [left, setLeft] = useState(TEAM[0].seconds);
  const [running, setRunning] = useState(false);

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      setLeft((value) => (value > 0 ? value - 1 : 0));
    }, 1000);
    return () => clearInterval(timer);
  }, [running]);

  function next() {
    const following = (index + 1) % TEAM.length;
    setIndex(following);
    setLeft(TEAM[following].seconds);
  }

  const person = TEAM[index];
  const done = left === 0;

  return (
    <main className="standup">
      <h1>Standup timer</h1>
      <p className="speaker">Now speaking: {person.name}</p>
      <p className={done ? "clock done" : "clock"}>{format(left)}</p>
      <div className="controls">
        <button onClick={() => setRunning(!running)}>
          {running ? "Pause" : "Start"}
        </button>
        <button onClick={next}>Next</button>
      </div>
      <ol className="queue">
        {TEAM.map((p, i) => (
          <li key={p.name} className={i === index ? "current" : ""}>
            {p.name}
          </li>
        ))}
      </ol>
    </main>
  );
}
