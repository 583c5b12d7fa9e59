import { useMemo, useState } from "react";
import _ from "lodash";
import debounce from "lodash/debounce";
import sortBy from "lodash/sortBy";

const PEOPLE = [
  { name: "Ada", team: "Engines", hours: 32 },
  { name: "Grace", team: "Compilers", hours: 40 },
  { name: "Linus", team: "Kernels", hours: 12 },
  { name: "Barbara", team: "Compilers", hours: 28 },
];

export default function App() {
  const [query, setQuery] = useState("");
  const search = useMemo(() => debounce((text: string) => setQuery(text), 150), []);
  const visible = PEOPLE.filter((p) => p.name.toLowerCase().includes(query.toLowerCase()));
  const groups = _.groupBy(sortBy(visible, "name"), "team");
  return (
    <main>
      <input placeholder="Search" onChange={(event) => search(event.target.value)} />
      <ul id="groups">
        {Object.entries(groups).map(([team, people]) => (
          <li key={team}>
            {_.startCase(team)}: {people.map((p) => p.name).join(", ")} ({_.sumBy(people, "hours")} h)
          </li>
        ))}
      </ul>
    </main>
  );
}
