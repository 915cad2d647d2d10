// The official TypeScript SDK as a client of BesluitBron (argv[2]: the `/mcp` URL), as
// assistants built on it meet the server: it connects, lists the tools (the SDK compiles
// every outputSchema with its JSON Schema validator), calls a search with a `limit`
// (the SDK checks the structured content against the tool's outputSchema) and a tool
// with an integer sent as a string. Fails (exit 1) on any error and on any warning or
// error the SDK or its validator prints: a schema a client warns about is a schema some
// client misreads.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { capturePrinted } from "./printed.mjs";

const url = new URL(process.argv[2]);
const printed = capturePrinted();
const problems = [];
const client = new Client({ name: "besluitbron-ts-check", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url));
const { tools } = await client.listTools();
// /mcp lists the stand-ins (search, fetch, lists) and the platform questions none takes.
const names = new Set(tools.map((t) => t.name));
if (!["search", "fetch", "lists"].every((n) => names.has(n)) || names.size < 4) {
  problems.push(`/mcp lists ${[...names].sort().join(", ")}`);
}
if (!tools.every((t) => t.outputSchema)) problems.push("a tool without an outputSchema");
const calls = [
  ["obv_search", { query: "begroting", limit: 3 }],
  ["tk_search", { query: "stikstof", limit: 2 }],
  ["tk_committees", { limit: "5" }],
];
for (const [name, args] of calls) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) problems.push(`${name}: a tool error: ${JSON.stringify(result.content)}`);
  else if (!result.structuredContent) problems.push(`${name}: no structured content`);
}
await client.close();
problems.push(...printed.map((p) => `the SDK printed ${p}`));
const size = Buffer.byteLength(JSON.stringify({ tools }));
if (problems.length > 0) {
  console.error(`ts-client: FAIL (${problems.length}):\n${problems.join("\n")}`);
  process.exit(1);
}
process.stdout.write(`ts-client: ok: ${tools.length} tools (${size} bytes), ${calls.length} calls, no warnings\n`);
