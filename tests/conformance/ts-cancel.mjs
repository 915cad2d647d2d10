// Cancelled means cancelled, and an error ends its request cleanly, as the TypeScript SDK
// (v1 1.32 and the v2 client 2.4, pinned in package-lock.json) sees it in the session
// era. argv[2]: the `/mcp` URL; argv[3]: the fakes' control URL (`http://ADDR/_control`).
// 1. A `search` whose platforms are held (the fakes' stall) is cancelled through the
//    SDK's AbortSignal once its first platform is queued: after the cancel no progress
//    notification arrives, no result, and the client reports nothing.
// 2. A call answered with a JSON-RPC error (an unknown tool) is rejected once, and the SDK
//    tries no resumption of that request's stream (it would print or report it).
// Prints one line per client; exits 1 on any problem or anything the SDK prints beyond
// what closing a plain session prints.
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { capturePrinted } from "./printed.mjs";

const url = new URL(process.argv[2]);
const control = process.argv[3];
const printed = capturePrinted();
const problems = [];
const lines = [];

async function faults(settings) {
  const r = await fetch(`${control}/faults`, { method: "POST", body: settings.join(" ") });
  if (r.status !== 200) throw new Error(`the fakes refused ${settings}: ${r.status}`);
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function cancelled(name, client, v2) {
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  const seen = [];
  const controller = new AbortController();
  let afterCancel = 0;
  let cancelledAt = null;
  const options = {
    signal: controller.signal,
    onprogress: (p) => {
      seen.push(p);
      if (cancelledAt !== null) afterCancel += 1;
    },
    timeout: 60_000,
  };
  // A question no earlier run asked, so no platform answers it from the buffer.
  const params = { name: "search", arguments: { query: `geannuleerd ${Date.now()}`, limit: 1 } };
  // v1 takes a result schema before the options; v2 the options alone.
  const call = (v2 ? client.callTool(params, options) : client.callTool(params, undefined, options))
    .then(
      (r) => ({ result: r }),
      (e) => ({ error: String(e?.message ?? e) }),
    );
  // Cancel once the first platform answered (progress 1 of N): the others are held.
  for (let i = 0; i < 200 && seen.length === 0; i++) await wait(50);
  cancelledAt = Date.now();
  controller.abort("the user stopped it");
  const outcome = await call;
  // Long enough for the held platforms to answer (their stall), any progress to come, and
  // the server's SSE retry interval (3 s) to pass, when an SDK would resume the stream.
  await wait(7_000);
  if (outcome.result) problems.push(`${name}: a result after the cancel`);
  if (afterCancel > 0) problems.push(`${name}: ${afterCancel} progress notifications after the cancel`);
  problems.push(...errors.map((e) => `${name}: the client reported an error: ${e}`));
  return seen.length;
}

async function errorEnds(name, client) {
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  let rejected = null;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    rejected = String(e?.message ?? e);
  }
  // Past the server's SSE retry interval (3 s), when an SDK would resume the stream.
  await wait(7_000);
  if (rejected === null) problems.push(`${name}: an unknown tool was not refused`);
  problems.push(...errors.map((e) => `${name}: the client reported an error after the refusal: ${e}`));
  return rejected;
}

for (const [name, make] of [
  ["sdk 1.32", () => [new ClientV1({ name: "besluitbron-ts-cancel", version: "1.0.0" }), new TransportV1(url)]],
  [
    "client 2.4",
    () => [
      new ClientV2({ name: "besluitbron-ts-cancel", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } }),
      new TransportV2(url),
    ],
  ],
]) {
  const [client, transport] = make();
  await client.connect(transport);
  await faults(["obv:stall-ms=0", "tk:stall-ms=3000", "opentk:stall-ms=3000", "ob:stall-ms=3000", "bwb:stall-ms=3000", "cvdr:stall-ms=3000"]);
  const progress = await cancelled(name, client, name.startsWith("client"));
  await faults(["tk:stall-ms=0", "opentk:stall-ms=0", "ob:stall-ms=0", "bwb:stall-ms=0", "cvdr:stall-ms=0"]);
  const refusal = await errorEnds(name, client);
  await client.close();
  lines.push(`${name}: cancelled after ${progress} progress, refusal "${(refusal ?? "").slice(0, 40)}…"`);
}
const closing = /SSE stream disconnected: AbortError/;
problems.push(...printed.filter((p) => !closing.test(p)).map((p) => `the SDK printed ${p}`));
if (problems.length > 0) {
  console.error(`ts-cancel: FAIL (${problems.length}):\n${problems.join("\n")}`);
  process.exit(1);
}
process.stdout.write(`ts-cancel: ok: ${lines.join("; ")}\n`);
