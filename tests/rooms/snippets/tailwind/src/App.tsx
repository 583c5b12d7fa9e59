import { useState } from "react";
import "./index.css";

const PEOPLE = ["Ada", "Grace", "Linus"];

export default function App() {
  const [current, setCurrent] = useState(0);
  return (
    <main className="min-h-screen bg-slate-100 p-6">
      <section className="mx-auto max-w-md rounded-xl bg-white p-6 shadow-lg">
        <h1 className="text-2xl font-bold text-brand">Team standup</h1>
        <p className="mt-2 text-sm text-slate-500">{PEOPLE.length} people, 15 minutes</p>
        <ul className="mt-4 space-y-2">
          {PEOPLE.map((name, i) => (
            <li
              key={name}
              className={`rounded-lg px-3 py-2 ${i === current ? "bg-blue-50 font-semibold text-blue-700" : "text-slate-700"}`}
            >
              {name}
            </li>
          ))}
        </ul>
        <button className="btn mt-4" onClick={() => setCurrent((current + 1) % PEOPLE.length)}>
          Next speaker
        </button>
      </section>
    </main>
  );
}
