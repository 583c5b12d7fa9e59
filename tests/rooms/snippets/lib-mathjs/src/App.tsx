import { useState } from "react";
import { evaluate, format } from "mathjs";

export default function App() {
  const [expression, setExpression] = useState("sqrt(16) * 2^3 * 12.5 cm to mm");
  let result: string;
  try {
    result = format(evaluate(expression), { precision: 6 });
  } catch (error) {
    result = (error as Error).message;
  }
  return (
    <main>
      <h1>Calculator</h1>
      <input value={expression} onChange={(event) => setExpression(event.target.value)} size={40} />
      <output id="result">{result}</output>
    </main>
  );
}
