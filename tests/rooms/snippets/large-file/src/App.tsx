import { rows } from "./data";

export default function App() {
  return <p>{rows.length} rows</p>;
}
