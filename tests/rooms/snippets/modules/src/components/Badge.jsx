import { label as prefix } from "../lib/label.js";

export default function Badge({ label }) {
  return <span className="badge">{prefix + label}</span>;
}
