import { total } from "./lib";
import { double } from "./lib/math";
import config from "./config.json";
import Badge from "./components/Badge";
import "./components/badge.css";
import * as React from "react";
import { createPortal } from "react-dom";

export default function App() {
  const portal = createPortal(<span id="portal">portal ok</span>, document.body);
  return (
    <div>
      <p id="result">{config.title}: {total([1, 2, 3])} / {double(21)}</p>
      <Badge label={React.version.startsWith("19") ? "react 19" : "other"} />
      {portal}
    </div>
  );
}
