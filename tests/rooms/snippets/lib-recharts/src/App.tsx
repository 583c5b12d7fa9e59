import { useMemo, useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { EXPENSES } from "./data";
import "./styles.css";

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
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={months} className="by-month">
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="month" />
          <YAxis width={48} />
          <Tooltip />
          <Line type="monotone" dataKey="total" stroke="#2563eb" isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={EXPENSES}>
          <XAxis dataKey="month" />
          <YAxis width={48} />
          <Legend />
          <Bar dataKey="food" fill="#16a34a" isAnimationActive={false} />
          <Bar dataKey="travel" fill="#f59e0b" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </main>
  );
}
