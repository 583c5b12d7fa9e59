import { useState } from "react";
import "./styles.css";

const TEAM = ["Ada", "Grace", "Linus", "Margaret"];

function shuffled(names: string[]): string[] {
  const order = [...names];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

export default function App() {
  const [order, setOrder] = useState(() => shuffled(TEAM));

  return (
    <main className="shuffle">
      <h1>Speaker shuffle</h1>
      <p className="hint">Today's speaking order:</p>
      <ol>
        {order.map((name) => (
          <li key={name}>{name}</li>
        ))}
      </ol>
      <button onClick={() => setOrder(shuffled(TEAM))}>Shuffle again</button>
    </main>
  );
}
