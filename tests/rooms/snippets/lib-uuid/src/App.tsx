import { useState } from "react";
import { v4 as uuidv4, validate } from "uuid";

type Todo = { id: string; text: string };

export default function App() {
  const [todos, setTodos] = useState<Todo[]>(() => [{ id: uuidv4(), text: "Water the plants" }]);
  return (
    <main>
      <button onClick={() => setTodos([...todos, { id: uuidv4(), text: `Task ${todos.length + 1}` }])}>
        Add task
      </button>
      <ul>
        {todos.map((todo) => (
          <li key={todo.id} data-valid={validate(todo.id)}>
            {todo.text} <code>{todo.id}</code>
          </li>
        ))}
      </ul>
    </main>
  );
}
