import { useEffect } from "react";

export default function App() {
  useEffect(() => {
    // Replaces the frame's own document: the parent must notice and stop the app.
    const t = setTimeout(() => { window.location.href = "/rooms/frame/?replaced=1"; }, 200);
    return () => clearTimeout(t);
  }, []);
  return <p>Leaving soon</p>;
}
