import { useEffect, useRef } from "react";
import * as d3 from "d3";

const SALES = [
  { region: "North", value: 42 },
  { region: "South", value: 28 },
  { region: "East", value: 35 },
  { region: "West", value: 51 },
];

export default function App() {
  const ref = useRef<SVGSVGElement>(null);
  useEffect(() => {
    const svg = d3.select(ref.current);
    const x = d3.scaleBand().domain(SALES.map((d) => d.region)).range([30, 390]).padding(0.2);
    const y = d3.scaleLinear().domain([0, d3.max(SALES, (d) => d.value) ?? 0]).nice().range([180, 10]);
    svg.selectAll("*").remove();
    svg
      .selectAll("rect")
      .data(SALES)
      .join("rect")
      .attr("class", "bar")
      .attr("x", (d) => x(d.region) ?? 0)
      .attr("y", (d) => y(d.value))
      .attr("width", x.bandwidth())
      .attr("height", (d) => 180 - y(d.value))
      .attr("fill", "steelblue");
    svg.append("g").attr("transform", "translate(0,180)").call(d3.axisBottom(x));
    svg.append("g").attr("transform", "translate(30,0)").call(d3.axisLeft(y));
  }, []);
  return (
    <main>
      <h1>Sales by region</h1>
      <svg ref={ref} width={400} height={200} />
    </main>
  );
}
