import { useMemo, useState } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { EXPENSES } from "./data";

export default function App() {
  const [category, setCategory] = useState<"all" | "food" | "travel">("all");
  const months = useMemo(
    () =>
      EXPENSES.map((month) => ({
        month: month.month,
        total: category === "all" ? month.food + month.travel : month[category],
      })),
    [category],
  );
  return (
    <main>
      <h1>My expenses</h1>
      <select value={category} onChange={(event) => setCategory(event.target.value as typeof category)}>
        <option value="all">All</option>
        <option value="food">Food</option>
        <option value="travel">Travel</option>
      </select>
      <LineChart width={560} height={260} data={months} className="by-month">
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="month" />
        <YAxis />
        <Tooltip />
        <Line type="monotone" dataKey="total" stroke="#2563eb" isAnimationActive={false} />
      </LineChart>
      <BarChart width={560} height={220} data={EXPENSES}>
        <XAxis dataKey="month" />
        <YAxis />
        <Legend />
        <Bar dataKey="food" fill="#16a34a" isAnimationActive={false} />
        <Bar dataKey="travel" fill="#f59e0b" isAnimationActive={false} />
      </BarChart>
    </main>
  );
}
