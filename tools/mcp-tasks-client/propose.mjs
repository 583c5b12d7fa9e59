// The official TypeScript MCP client (@modelcontextprotocol/client, version negotiation "auto")
// with the Tasks extension's requester (@modelcontextprotocol/ext-tasks) proposes an app and
// waits for the owner's decision, as a host would. Prints one JSON line per step on stdout:
// {"step":"created"}, {"step":"listening"}, {"step":"notification"}, {"step":"settled"},
// {"step":"tasks/get"}. The host's parts are here: the raw dispatch the extension needs for
// 2026-07-28's task shapes (a fetch with the revision's headers), and the subscriptions/listen
// stream (the SDK's listen() knows no taskIds), whose notifications it hands to the session.
// Usage: node propose.mjs URL TOKEN ARGUMENTS_JSON
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { contributeTaskFilterV2 } from "@modelcontextprotocol/ext-tasks/core/v2";

const [url, token, argumentsJson] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${token}` };
const say = (step, data = {}) => process.stdout.write(JSON.stringify({ step, ...data }) + "\n");

const client = new Client(
  { name: "osfoundry-tests", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? "2026-07-28";
const framing = {
  protocolVersion,
  clientInfo: { name: "osfoundry-tests", version: "1.0.0" },
  clientCapabilities: {},
};

let nextId = 1;
function headersFor(request, extra = {}) {
  const name = request.params?.name ?? request.params?.taskId;
  return {
    ...auth,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": framing.protocolVersion,
    "mcp-method": request.method,
    ...(name === undefined ? {} : { "mcp-name": name }),
    ...extra,
  };
}

async function rawDispatch(request, options = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: headersFor(request, options.context?.headers),
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, ...request }),
    signal: options.signal,
  });
  const body = await response.json();
  return body.error ? { kind: "error", error: body.error } : { kind: "result", result: body.result };
}

async function listen(taskIds, onMessage) {
  const filter = contributeTaskFilterV2({}, taskIds);
  const request = {
    method: "subscriptions/listen",
    params: {
      ...filter,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": framing.protocolVersion,
        "io.modelcontextprotocol/clientInfo": framing.clientInfo,
        "io.modelcontextprotocol/clientCapabilities": {
          extensions: { "io.modelcontextprotocol/tasks": {} },
        },
      },
    },
  };
  const controller = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: headersFor(request),
    body: JSON.stringify({ jsonrpc: "2.0", id: "listen-ts", ...request }),
    signal: controller.signal,
  });
  (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
          if (data.length) onMessage(JSON.parse(data.join("\n")));
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return () => controller.abort();
}

const session = createTaskSessionFromClient(client, {
  endpointId: "osfoundry",
  rawDispatch,
  v2RequestFraming: framing,
});
const execution = await session.callTool("propose_room_snippet_app", JSON.parse(argumentsJson));
const taskId = execution.handle?.taskId;
say("created", { kind: execution.kind, taskId, protocolVersion, era: client.getProtocolEra() });

let acknowledged;
const ready = new Promise((resolve) => (acknowledged = resolve));
const stop = await listen([taskId], (message) => {
  if (message.method === "notifications/subscriptions/acknowledged") {
    say("listening", { notifications: message.params.notifications });
    acknowledged();
  } else if (message.method === "notifications/tasks") {
    say("notification", { status: message.params.status, taskId: message.params.taskId });
    client.fallbackNotificationHandler?.(message);
  }
});
await ready;
const { outcome } = await execution.settle();
say("settled", { status: outcome.status, result: resultFromTaskOutcome(outcome) });
const got = await rawDispatch({ method: "tasks/get", params: { taskId, ...{ _meta: {
  "io.modelcontextprotocol/protocolVersion": framing.protocolVersion,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
} } } });
say("tasks/get", got);
stop();
await session.close();
await client.close();
