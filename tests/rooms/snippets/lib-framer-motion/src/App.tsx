import { useState } from "react";
import { AnimatePresence, motion } from "framer-motion";

export default function App() {
  const [notes, setNotes] = useState(["Ship the release", "Write the changelog"]);
  return (
    <main>
      <button onClick={() => setNotes([...notes, `Note ${notes.length + 1}`])}>Add note</button>
      <ul>
        <AnimatePresence>
          {notes.map((note) => (
            <motion.li
              key={note}
              className="note"
              initial={{ opacity: 0, y: -8 }}
              animate={{ opacity: 1, y: 0 }}
              exit={{ opacity: 0 }}
              transition={{ duration: 0.2 }}
              onClick={() => setNotes(notes.filter((n) => n !== note))}
            >
              {note}
            </motion.li>
          ))}
        </AnimatePresence>
      </ul>
    </main>
  );
}
