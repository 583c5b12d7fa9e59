import { useState } from "react";
import { BarElement, CategoryScale, Chart as ChartJS, Legend, LinearScale, Title, Tooltip } from "chart.js";
import { Bar } from "react-chartjs-2";

ChartJS.register(CategoryScale, LinearScale, BarElement, Title, Tooltip, Legend);

export default function App() {
  const [drawn, setDrawn] = useState(false);
  const data = {
    labels: ["Mon", "Tue", "Wed", "Thu", "Fri"],
    datasets: [{ label: "Commits", data: [12, 19, 7, 15, 9], backgroundColor: "#60a5fa" }],
  };
  return (
    <main className="chart" data-drawn={drawn}>
      <h1>Commits this week</h1>
      <div style={{ width: 520, height: 280 }}>
        <Bar
          data={data}
          options={{
            maintainAspectRatio: false,
            animation: { duration: 0, onComplete: () => setDrawn(true) },
            plugins: { title: { display: true, text: "Team activity" } },
          }}
        />
      </div>
    </main>
  );
}
