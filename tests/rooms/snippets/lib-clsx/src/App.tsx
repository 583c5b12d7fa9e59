import { useState } from "react";
import clsx from "clsx";
import "./tabs.css";

const TABS = ["Overview", "Activity", "Settings"];

export default function App() {
  const [active, setActive] = useState("Overview");
  return (
    <nav className="tabs">
      {TABS.map((tab) => (
        <button
          key={tab}
          className={clsx("tab", { active: tab === active, muted: tab === "Settings" && tab !== active })}
          onClick={() => setActive(tab)}
        >
          {tab}
        </button>
      ))}
    </nav>
  );
}
