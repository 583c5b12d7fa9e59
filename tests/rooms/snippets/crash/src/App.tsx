import { useState } from "react";

function Fragile({ broken }: { broken: boolean }) {
  if (broken) throw new Error("Fragile broke on purpose");
  return <p>All good</p>;
}

export default function App() {
  const [broken, setBroken] = useState(false);
  return (
    <div>
      <Fragile broken={broken} />
      <button onClick={() => setBroken(true)}>Break render</button>
      <button onClick={() => { throw new Error("Handler failed on purpose"); }}>Break handler</button>
      <button onClick={() => { Promise.reject(new Error("Async failed on purpose")); }}>Break promise</button>
    </div>
  );
}
