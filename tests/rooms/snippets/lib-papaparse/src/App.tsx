import { useMemo, useState } from "react";
import Papa from "papaparse";

const SAMPLE = `date,description,amount
2026-06-01,Groceries,54.20
2026-06-02,"Train, return",23.00
2026-06-04,Books,18.50
`;

type Row = { date: string; description: string; amount: number };

export default function App() {
  const [text, setText] = useState(SAMPLE);
  const parsed = useMemo(
    () => Papa.parse<Row>(text.trim(), { header: true, dynamicTyping: true, skipEmptyLines: true }),
    [text],
  );
  const total = parsed.data.reduce((sum, row) => sum + (Number(row.amount) || 0), 0);
  return (
    <main>
      <h1>CSV viewer</h1>
      <textarea rows={6} cols={60} value={text} onChange={(event) => setText(event.target.value)} />
      <table>
        <thead>
          <tr>{parsed.meta.fields?.map((field) => <th key={field}>{field}</th>)}</tr>
        </thead>
        <tbody>
          {parsed.data.map((row, i) => (
            <tr key={i}><td>{row.date}</td><td>{row.description}</td><td>{row.amount}</td></tr>
          ))}
        </tbody>
      </table>
      <p id="total">Total: {total.toFixed(2)}</p>
    </main>
  );
}
