import { words } from "./words";

export default function App() {
  return <p>{words.length} words</p>;
}
