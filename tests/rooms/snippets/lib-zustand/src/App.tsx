import { create } from "zustand";
import { useShallow } from "zustand/react/shallow";

type Cart = {
  items: Record<string, number>;
  add: (name: string) => void;
  clear: () => void;
};

const useCart = create<Cart>()((set) => ({
  items: {},
  add: (name) => set((state) => ({ items: { ...state.items, [name]: (state.items[name] ?? 0) + 1 } })),
  clear: () => set({ items: {} }),
}));

function Total() {
  const count = useCart((state) => Object.values(state.items).reduce((a, b) => a + b, 0));
  return <p id="total">{count} items</p>;
}

export default function App() {
  const [items, add, clear] = useCart(useShallow((state) => [state.items, state.add, state.clear]));
  return (
    <main>
      {["Apples", "Bread", "Cheese"].map((name) => (
        <button key={name} onClick={() => add(name)}>Add {name}</button>
      ))}
      <button onClick={clear}>Clear</button>
      <ul>
        {Object.entries(items).map(([name, n]) => <li key={name}>{name} × {n}</li>)}
      </ul>
      <Total />
    </main>
  );
}
