// The hostile app's escapes, tried through the curated libraries it loads (and Tailwind's
// runtime, which its CSS asks for): each records "blocked: ..." or "ALLOWED: ...".
import * as d3 from "d3";
import Papa from "papaparse";
import * as THREE from "three";
import { create } from "zustand";
import { persist } from "zustand/middleware";
import "./tailwind.css";

type Result = [string, string];

async function attempt(name: string, fn: () => unknown): Promise<Result> {
  try {
    const value = await fn();
    return [name, "ALLOWED: " + String(value)];
  } catch (err) {
    return [name, "blocked: " + ((err as Error)?.name || String(err))];
  }
}

export default async function extraChecks(): Promise<Result[]> {
  const w = window as any;
  return [
    await attempt("d3.json", () => d3.json("/x-d3-json")),
    await attempt("papaparse download", () =>
      new Promise((resolve, reject) =>
        Papa.parse("/x-papa.csv", {
          download: true,
          complete: resolve,
          error: () => reject(Object.assign(new Error("download failed"), { name: "NetworkError" })),
        }),
      ),
    ),
    await attempt("three TextureLoader", () =>
      new THREE.TextureLoader().loadAsync("/x-texture.png").catch(() => {
        throw Object.assign(new Error("no texture"), { name: "LoadError" });
      }),
    ),
    await attempt("d3.select(parent)", () => d3.select(w.parent.document.body).size()),
    await attempt("zustand persist", () => {
      const store = create(persist(() => ({ notes: "mine" }), { name: "osf:app:victim:notes" }));
      return store.getState().notes + " " + w.localStorage.getItem("osf:app:victim:notes");
    }),
  ];
}
