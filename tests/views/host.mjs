// A host page for the views test (server/tests/views.rs), built on the official MCP Apps
// host bridge (`AppBridge` and `PostMessageTransport` of @modelcontextprotocol/ext-apps):
// it finds a tool's view in tools/list (`_meta.ui.resourceUri`), reads it
// (resources/read), renders it in a sandboxed frame, hands it the tool's input and
// result through the bridge, and answers the view's tools/call by calling the server.
// The server is reached at /mcp on this page's own origin (the test forwards it) in the
// stateless 2026-07-28 era, declaring the UI extension.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
let nextId = 1;

/** One request to the server; its JSON-RPC result, or an Error with its message. */
async function mcp(method, params) {
  const body = { jsonrpc: "2.0", id: nextId++, method, params: Object.assign({}, params) };
  body.params._meta = Object.assign({}, body.params._meta, {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [UI]: { mimeTypes: [MIME] } } },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  const name = method === "resources/read" ? params.uri : params.name;
  if (name) headers["mcp-name"] = name;
  const response = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter(Boolean)
      .map((l) => JSON.parse(l)).find((m) => m.id === body.id)
    : JSON.parse(text);
  if (!json) throw new Error(`${method}: no answer (${response.status})`);
  if (json.error) throw new Error(`${method}: ${json.error.message}`);
  return json.result;
}

window.hostCalls = [];
window.hostLog = [];

/**
 * Renders the view of `tool` for a call with `args`: the result handed over is the
 * server's, or `given` when the test passes one (a result carrying hostile strings).
 * Resolves once the view has said it is initialized.
 */
window.showView = async (tool, args, given) => {
  const listed = await mcp("tools/list", {});
  const definition = listed.tools.find((t) => t.name === tool);
  const uri = definition?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(`${tool} names no view`);
  const read = await mcp("resources/read", { uri });
  const page = read.contents[0];
  if (page.mimeType !== MIME) throw new Error(`${uri} is ${page.mimeType}`);
  const result = given ?? (await mcp("tools/call", { name: tool, arguments: args }));

  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = uri;
  document.getElementById("views").replaceChildren(frame);
  const bridge = new AppBridge(null, { name: "besluitbron-test-host", version: "1" },
    { serverTools: {}, openLinks: {} }, { hostContext: { theme: "light", displayMode: "inline" } });
  bridge.oncalltool = async (params) => {
    window.hostCalls.push({ name: params.name, arguments: params.arguments });
    return mcp("tools/call", params);
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${Math.min(height + 4, 4000)}px`;
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = async () => {
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result);
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = page.text;
  await initialized;
  window.hostLog.push(`${tool}: ${uri} rendered`);
  return { uri, meta: page._meta ?? null };
};
