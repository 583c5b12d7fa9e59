import _ from "lodash";

export default function App() {
  return <p>{_.capitalize("hello")}</p>;
}
