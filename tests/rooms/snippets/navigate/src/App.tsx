// Replaces the frame's own document when its button is pressed: the parent must notice and
// stop the app. (Started by the test's click, never by a timer.)
export default function App() {
  const leave = () => {
    window.location.href = "/rooms/frame/?replaced=1";
  };
  return <button onClick={leave}>Leave</button>;
}
