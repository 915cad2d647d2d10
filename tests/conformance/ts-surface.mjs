// The tool surface as the official TypeScript SDK (v1, pinned in package-lock.json) meets
// it, without transport options (argv[2]: the `/mcp` URL): the default list at `/mcp`
// (`search`, `fetch` and `lists` in place of the platforms' keyword searches, plain
// readers, reference lists and status; the other questions listed), a chosen set (`/mcp?toolsets=tk` adds the
// Tweede Kamer's whole set), a platform's address (`/tk/mcp`: its tools only), and a call
// by name of a tool `/mcp` does not list (`tk_search`), which answers as listed tools do.
// Each list is one page. Exits 1 on any problem or anything the SDK prints.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { capturePrinted } from "./printed.mjs";

const mcp = new URL(process.argv[2]);
const printed = capturePrinted();
const problems = [];
const lines = [];

async function connect(address) {
  const client = new Client({ name: "besluitbron-ts-surface", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(address, mcp)));
  return client;
}

async function listed(address) {
  const client = await connect(address);
  const page = await client.listTools();
  await client.close();
  if (page.nextCursor) problems.push(`${address}: a second page (${page.nextCursor})`);
  const names = page.tools.map((t) => t.name);
  lines.push(`${address} ${names.length} tools`);
  return names;
}

const expect = (address, names, has, hasNot) => {
  for (const n of has) if (!names.includes(n)) problems.push(`${address}: ${n} not listed: ${names}`);
  for (const n of hasNot) if (names.includes(n)) problems.push(`${address}: ${n} listed: ${names}`);
};

const all = await listed("/mcp");
expect("/mcp", all, ["search", "fetch", "lists", "tk_votes"], ["tk_search", "obv_search", "rechtspraak_courts"]);
const chosen = await listed("/mcp?toolsets=tk");
expect("/mcp?toolsets=tk", chosen, ["search", "fetch", "lists", "tk_search", "tk_votes", "tk_factions"], ["obv_search"]);
const tk = await listed("/tk/mcp");
expect("/tk/mcp", tk, ["tk_search", "tk_votes"], ["search", "fetch"]);
if (!tk.every((n) => n.startsWith("tk_"))) problems.push(`/tk/mcp: another platform's tool: ${tk}`);

const client = await connect("/mcp");
const result = await client.callTool({ name: "tk_search", arguments: { query: "stikstof", limit: 2 } });
await client.close();
if (result.isError) problems.push(`tk_search at /mcp: a tool error: ${JSON.stringify(result.content)}`);
else if (!result.structuredContent) problems.push("tk_search at /mcp: no structured content");
else lines.push("tk_search called by name at /mcp");

// `lists` answers a list as its own tool does (the SDK checks the structured content
// against `lists`' outputSchema), and names that tool last.
const lists = await connect("/mcp");
const courts = await lists.callTool({ name: "lists", arguments: { platform: "rechtspraak", list: "courts", filter: "Gerechtshof" } });
const own = await lists.callTool({ name: "rechtspraak_courts", arguments: { filter: "Gerechtshof" } });
await lists.close();
const last = courts.content?.[courts.content.length - 1]?.text ?? "";
if (courts.isError) problems.push(`lists at /mcp: a tool error: ${JSON.stringify(courts.content)}`);
else if (JSON.stringify(courts.structuredContent) !== JSON.stringify(own.structuredContent))
  problems.push("lists rechtspraak courts: not rechtspraak_courts' structured content");
else if (!last.includes("rechtspraak_courts")) problems.push(`lists: the last text does not name the tool: ${last}`);
else lines.push("lists rechtspraak courts answered as rechtspraak_courts");

problems.push(...printed.map((p) => `the SDK printed ${p}`));
if (problems.length > 0) {
  console.error(`ts-surface: FAIL (${problems.length}):\n${problems.join("\n")}`);
  process.exit(1);
}
process.stdout.write(`ts-surface: ok: ${lines.join("; ")}\n`);
