// Progress as the TypeScript SDK's v2 client (`@modelcontextprotocol/client`, pinned in
// package-lock.json) sees it, in both protocol eras (argv[2]: the `/mcp` URL): `search`
// over every platform is called with a progress callback, once in the session era
// (2025-11-25, the initialize handshake) and once in the stateless era (2026-07-28,
// pinned). Each era must call the callback once per platform asked, in order, the last
// "N of N", all before the result; and the client must report no error (a progress
// notification it cannot match to its request is reported through `onerror` as "a
// progress notification for an unknown token", and the callback is not called).
// Prints one line per era; exits 1 on any problem or anything the SDK prints.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { capturePrinted } from "./printed.mjs";

const url = new URL(process.argv[2]);
const printed = capturePrinted();

const eras = [
  ["2025-11-25", { mode: "legacy" }, "stikstof"],
  ["2026-07-28", { mode: { pin: "2026-07-28" } }, "begroting"],
];
const problems = [];
const lines = [];
for (const [era, versionNegotiation, query] of eras) {
  const errors = [];
  const client = new Client({ name: "besluitbron-ts-progress", version: "1.0.0" }, { versionNegotiation });
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  await client.connect(new StreamableHTTPClientTransport(url));
  const seen = [];
  let answered = false;
  const result = await client.callTool(
    { name: "search", arguments: { query, limit: 1 } },
    {
      onprogress: (p) => {
        if (answered) problems.push(`${era}: progress after the result: ${JSON.stringify(p)}`);
        seen.push(p);
      },
    },
  );
  answered = true;
  const version = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion ?? "?";
  await client.close();
  if (result.isError) {
    problems.push(`${era}: search is a tool error: ${JSON.stringify(result.content)}`);
    continue;
  }
  const asked = (result.structuredContent?.platforms ?? []).filter((p) => p.status !== "no_keyword_search");
  if (version !== era) problems.push(`${era}: the client spoke ${version}`);
  if (asked.length === 0) problems.push(`${era}: no platform was asked`);
  if (seen.length !== asked.length) {
    problems.push(`${era}: the progress callback fired ${seen.length} times for ${asked.length} platforms`);
  }
  seen.forEach((p, i) => {
    if (p.progress !== i + 1 || p.total !== asked.length) {
      problems.push(`${era}: notification ${i + 1} says ${p.progress} of ${p.total}`);
    }
  });
  problems.push(...errors.map((e) => `${era}: the client reported an error: ${e}`));
  lines.push(`${era} ${seen.length} of ${asked.length}`);
}
problems.push(...printed.map((p) => `the SDK printed ${p}`));
if (problems.length > 0) {
  console.error(`ts-progress: FAIL (${problems.length}):\n${problems.join("\n")}`);
  process.exit(1);
}
process.stdout.write(`ts-progress: ok: @modelcontextprotocol/client 2.4.0, progress callbacks ${lines.join(", ")}\n`);
