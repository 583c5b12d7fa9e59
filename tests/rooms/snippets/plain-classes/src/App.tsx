import "./styles.css";

// Class names Tailwind would style, in an app that never asked for Tailwind.
export default function App() {
  return (
    <main className="p-6">
      <h1 className="text-2xl font-bold">Plain standup</h1>
      <p className="mt-2 text-sm">Three people, fifteen minutes</p>
      <ul className="space-y-2">
        <li>Ada</li>
        <li>Grace</li>
      </ul>
      <button className="btn">Next speaker</button>
    </main>
  );
}
