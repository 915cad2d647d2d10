// The MCP Inspector's command line, as a new user runs it: two versions (0.15 and 2.12,
// pinned in package-lock.json), each given only an address and a method — no transport
// option — against BesluitBron (argv[2]: the `/mcp` URL). Both infer Streamable HTTP from
// a path that ends in `/mcp` (a query string kept), so every address is of that form:
// the default list at `/mcp`, a chosen set at `/mcp?toolsets=tk`, a platform's address
// `/tk/mcp`, and a call by name of a tool `/mcp` does not list (`tk_search`). 0.15 sends
// that call and BesluitBron answers it; 2.12 looks a tool up in the address's list before
// it calls and refuses one not listed ("Tool 'tk_search' not found on server.") without
// asking the server — for it the call is made where the tool is listed,
// `/mcp?toolsets=tk`, and its refusal at `/mcp` is checked to be its own.
// (`/mcp/tk` is not such an address: 0.15 takes it for an SSE endpoint, which
// BesluitBron does not serve, and 2.12 refuses it without `--transport http`.)
// Prints one line per version; exits 1 on any problem.
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const mcp = new URL(process.argv[2]);
// (version, its command line, whether it calls a tool its list does not hold)
const versions = [
  ["0.15", join(here, "node_modules/inspector-0-15/cli/build/cli.js"), true],
  ["2.12", join(here, "node_modules/inspector-2-12/clients/launcher/build/index.js"), false],
];

function run(cli, address, args) {
  const url = new URL(address, mcp).href;
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, "--cli", url, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      // The answer on stdout; 2.12 writes its own errors as JSON on stderr.
      let answer = null;
      for (const out of [stdout, stderr]) {
        try {
          answer ??= JSON.parse(out);
        } catch {
          // not JSON
        }
      }
      resolve({ error, stdout, stderr, answer });
    });
  });
}

const failures = [];
for (const [version, cli, callsUnlisted] of versions) {
  const problems = [];
  const lines = [];
  const list = async (address, has, hasNot) => {
    const r = await run(cli, address, ["--method", "tools/list"]);
    const names = r.answer?.tools?.map((t) => t.name);
    if (!names) {
      problems.push(`${address}: no tool list: ${r.error ?? ""} ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 600)}`);
      return [];
    }
    if (r.answer.nextCursor) problems.push(`${address}: a second page`);
    for (const n of has) if (!names.includes(n)) problems.push(`${address}: ${n} not listed: ${names}`);
    for (const n of hasNot) if (names.includes(n)) problems.push(`${address}: ${n} listed: ${names}`);
    lines.push(`${address} ${names.length}`);
    return names;
  };
  await list("/mcp", ["search", "fetch", "lists", "tk_votes"], ["tk_search", "tk_factions"]);
  await list("/mcp?toolsets=tk", ["search", "tk_search", "tk_votes"], ["obv_search"]);
  const tk = await list("/tk/mcp", ["tk_search", "tk_votes"], ["search", "fetch"]);
  if (!tk.every((n) => n.startsWith("tk_"))) problems.push(`/tk/mcp: another platform's tool: ${tk}`);
  const call = async (address) => {
    const r = await run(cli, address, [
      "--method", "tools/call", "--tool-name", "tk_search", "--tool-arg", "query=stikstof", "--tool-arg", "limit=2",
    ]);
    if (!r.answer || r.answer.isError || !r.answer.structuredContent) {
      problems.push(`tk_search at ${address}: ${r.error ?? ""} ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 600)}`);
    } else {
      lines.push(`tk_search called at ${address}`);
    }
    return r;
  };
  if (callsUnlisted) {
    await call("/mcp");
  } else {
    const refused = await run(cli, "/mcp", ["--method", "tools/call", "--tool-name", "tk_search", "--tool-arg", "query=x"]);
    if (refused.answer?.error?.code !== "tool_not_found") {
      problems.push(`tk_search at /mcp: not the client's own refusal: ${refused.stdout.slice(0, 300)} ${refused.stderr.slice(0, 300)}`);
    } else {
      lines.push("tk_search at /mcp refused by the client itself (not listed there)");
    }
    await call("/mcp?toolsets=tk");
  }
  if (problems.length > 0) failures.push(`Inspector ${version}:\n  ${problems.join("\n  ")}`);
  else process.stdout.write(`inspector ${version}: ok: ${lines.join("; ")}\n`);
}
if (failures.length > 0) {
  console.error(`inspector: FAIL\n${failures.join("\n")}`);
  process.exit(1);
}
