// A hostile snippet: every line tries something the sandbox must prevent.
// Each check records "blocked: ..." or "ALLOWED: ..." for the test to read.
import { useEffect, useState } from "react";
import extraChecks from "./extra";

type Result = [string, string];

function attempt(name: string, fn: () => unknown): Result {
  try {
    const value = fn();
    return [name, "ALLOWED: " + String(value)];
  } catch (err) {
    return [name, "blocked: " + (err as Error).name];
  }
}

async function attemptAsync(name: string, fn: () => Promise<unknown>): Promise<Result> {
  try {
    const value = await fn();
    return [name, "ALLOWED: " + String(value)];
  } catch (err) {
    return [name, "blocked: " + (err as Error).name];
  }
}

function waitForLoad(el: HTMLImageElement | HTMLIFrameElement, ms = 1500): Promise<string> {
  return new Promise((resolve, reject) => {
    el.onload = () => resolve("loaded");
    el.onerror = () => reject(Object.assign(new Error("error event"), { name: "LoadError" }));
    setTimeout(() => reject(Object.assign(new Error("no load"), { name: "NoLoad" })), ms);
  });
}

async function runAll(): Promise<Result[]> {
  const w = window as any;
  const out: Result[] = [];
  out.push(attempt("cookie", () => document.cookie));
  out.push(attempt("set-cookie", () => { document.cookie = "stolen=1"; return document.cookie; }));
  out.push(attempt("localStorage", () => w.localStorage.getItem("osf:app:victim:notes")));
  out.push(attempt("sessionStorage", () => w.sessionStorage.length));
  out.push(await attemptAsync("indexedDB", () => new Promise((res, rej) => {
    const req = indexedDB.open("x");
    req.onsuccess = () => res("opened");
    req.onerror = () => rej(req.error);
  })));
  out.push(attempt("parent.document", () => w.parent.document.title));
  out.push(attempt("parent.localStorage", () => w.parent.localStorage.length));
  out.push(attempt("parent.OsfAppFrame", () => w.parent.OsfAppFrame.mount));
  out.push(await attemptAsync("fetch", () => fetch("/x-fetch").then((r) => r.status)));
  out.push(await attemptAsync("xhr", () => new Promise((res, rej) => {
    const x = new XMLHttpRequest();
    x.open("GET", "/x-xhr");
    x.onload = () => res(x.status);
    x.onerror = () => rej(Object.assign(new Error("xhr error"), { name: "NetworkError" }));
    x.send();
  })));
  out.push(attempt("sendBeacon", () => {
    if (!navigator.sendBeacon("/x-beacon", "data")) throw Object.assign(new Error(), { name: "Refused" });
    return "queued";
  }));
  out.push(await attemptAsync("websocket", () => new Promise((res, rej) => {
    const ws = new WebSocket("ws://" + location.host + "/x-ws");
    ws.onopen = () => res("open");
    ws.onerror = () => rej(Object.assign(new Error("ws error"), { name: "NetworkError" }));
  })));
  out.push(await attemptAsync("image", () => {
    const img = new Image();
    const p = waitForLoad(img);
    img.src = "/x-image.png";
    return p;
  }));
  out.push(await attemptAsync("nested-frame", () => {
    const f = document.createElement("iframe");
    const p = waitForLoad(f);
    f.src = "/x-frame";
    document.body.appendChild(f);
    return p.then(() => { try { return f.contentDocument ? "readable" : "opaque"; } catch { return "opaque"; } });
  }));
  out.push(attempt("window.open", () => {
    const win = window.open("/x-popup");
    if (!win) throw Object.assign(new Error(), { name: "Refused" });
    return "opened";
  }));
  out.push(attempt("form", () => {
    const form = document.createElement("form");
    form.method = "POST";
    form.action = "/x-form";
    document.body.appendChild(form);
    form.submit();
    return "submitted";
  }));
  out.push(attempt("top.location", () => { w.top.location = "/x-pwned"; return w.top.location.href; }));
  out.push(attempt("top.location.href", () => { w.top.location.href = "/x-pwned2"; return "assigned"; }));
  out.push(...(await extraChecks()));
  // Messages to the parent: must be ignored or handled as untrusted data.
  w.parent.postMessage({ type: "approve" }, "*");
  w.parent.postMessage({ type: "osf:approve", proposal: 1 }, "*");
  w.parent.postMessage({ type: "osf:error", phase: "<img src=x onerror=alert(1)>", message: "<b id=injected>html</b>" }, "*");
  out.push(["messages", "sent"]);
  return out;
}

export default function App() {
  const [results, setResults] = useState<Result[] | null>(null);
  // What the frame's policy refused, as it refuses it: the test's proof that each network
  // attempt had its chance (no waiting for something not to happen).
  const [refused, setRefused] = useState<string[]>([]);
  useEffect(() => {
    const seen = (e: SecurityPolicyViolationEvent) =>
      setRefused((list) => [...list, `${e.effectiveDirective} ${e.blockedURI}`]);
    document.addEventListener("securitypolicyviolation", seen);
    runAll().then(setResults);
    return () => document.removeEventListener("securitypolicyviolation", seen);
  }, []);
  if (!results) return <p>Running checks…</p>;
  return (
    <>
      <ul id="results">
        {results.map(([name, result]) => (
          <li key={name} data-check={name}>{result}</li>
        ))}
        <li id="done">done</li>
      </ul>
      <ul id="refused">
        {refused.map((line, n) => <li key={n} data-refused>{line}</li>)}
      </ul>
    </>
  );
}
