import { useState } from "react";
import { CheckCircle2, Circle, Plus, Trash2 } from "lucide-react";

type Card = { id: number; title: string; done: boolean };

export default function App() {
  const [cards, setCards] = useState<Card[]>([
    { id: 1, title: "Draft the agenda", done: true },
    { id: 2, title: "Book the room", done: false },
  ]);
  const [title, setTitle] = useState("");

  function add() {
    if (!title.trim()) return;
    setCards((current) => [...current, { id: Date.now(), title: title.trim(), done: false }]);
    setTitle("");
  }

  return (
    <main className="board">
      <h1>Kanban</h1>
      <div className="new-card">
        <input
          value={title}
          onChange={(event) => setTitle(event.target.value)}
          onKeyDown={(event) => event.key === "Enter" && add()}
          placeholder="New card"
        />
        <button aria-label="Add card" onClick={add}><Plus size={16} /></button>
      </div>
      <ul>
        {cards.map((card) => (
          <li key={card.id}>
            <button
              aria-label={card.done ? "Mark open" : "Mark done"}
              onClick={() => setCards((all) => all.map((c) => (c.id === card.id ? { ...c, done: !c.done } : c)))}
            >
              {card.done ? <CheckCircle2 color="green" size={18} /> : <Circle size={18} />}
            </button>
            <span>{card.title}</span>
            <button aria-label="Delete" onClick={() => setCards((all) => all.filter((c) => c.id !== card.id))}>
              <Trash2 size={16} />
            </button>
          </li>
        ))}
      </ul>
    </main>
  );
}
