// A busy loop: 200 ms after mounting, the app stops yielding. (Bounded to 20 s so a stuck
// test run cannot spin a renderer forever; the test is over long before.)
import { useEffect } from "react";

export default function App() {
  useEffect(() => {
    const timer = setTimeout(() => {
      const end = Date.now() + 20000;
      while (Date.now() < end) {}
    }, 200);
    return () => clearTimeout(timer);
  }, []);
  return <p>Spinning soon</p>;
}
