import leftPad from "left-pad";

export default function App() {
  return <p>{leftPad("7", 3, "0")}</p>;
}
