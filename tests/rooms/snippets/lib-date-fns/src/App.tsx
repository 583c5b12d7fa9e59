import { useState } from "react";
import { addDays, addWeeks, format, isToday, startOfWeek } from "date-fns";
import differenceInCalendarDays from "date-fns/differenceInCalendarDays";
import { fr } from "date-fns/locale";

const DEADLINE = new Date(2030, 0, 1);

export default function App() {
  const [offset, setOffset] = useState(0);
  const monday = startOfWeek(addWeeks(new Date(2026, 5, 15), offset), { weekStartsOn: 1 });
  const days = Array.from({ length: 7 }, (_, i) => addDays(monday, i));
  return (
    <main>
      <h1>Semaine du {format(monday, "d MMMM yyyy", { locale: fr })}</h1>
      <button onClick={() => setOffset(offset - 1)}>Previous</button>
      <button onClick={() => setOffset(offset + 1)}>Next</button>
      <ol id="week">
        {days.map((day) => (
          <li key={day.toISOString()} className={isToday(day) ? "today" : undefined}>
            {format(day, "EEEE d", { locale: fr })}
          </li>
        ))}
      </ol>
      <p id="deadline">{differenceInCalendarDays(DEADLINE, monday)} days to the deadline</p>
    </main>
  );
}
