// A busy loop, started by the test's click: the app stops yielding. (Bounded to 20 s so a
// stuck test run cannot spin a renderer forever; the test is over long before.)
export default function App() {
  const spin = () => {
    // After the click's own handling, so the click itself completes.
    setTimeout(() => {
      const end = Date.now() + 20000;
      while (Date.now() < end) {}
    }, 0);
  };
  return <button onClick={spin}>Spin</button>;
}
