// The view side of the MCP Apps host bridge (io.modelcontextprotocol/ui): JSON-RPC 2.0
// over postMessage with the host's frame. `ui/initialize` first, then
// `ui/notifications/initialized`; the host sends `ui/notifications/tool-input` and
// `ui/notifications/tool-result`; the view calls tools with `tools/call` and tells the
// host its size with `ui/notifications/size-changed`. Messages from anything but the
// host's frame are ignored.
"use strict";
const Bridge = (() => {
  const host = window.parent;
  const pending = new Map();
  const on = { input: null, result: null, context: null };
  let next = 1;
  const send = (message) => host.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const notify = (method, params) => send({ method, params: params || {} });
  const answer = (m) => {
    if (m.method === "ui/resource-teardown" || m.method === "ping") {
      send({ id: m.id, result: {} });
    } else {
      send({ id: m.id, error: { code: -32601, message: "method not found" } });
    }
  };
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (event.source !== host || !m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(new Error(String(m.error.message || "the host refused")));
      else waiting.resolve(m.result);
      return;
    }
    if (m.id !== undefined) return answer(m);
    const params = m.params || {};
    if (m.method === "ui/notifications/tool-input" && on.input) on.input(params);
    else if (m.method === "ui/notifications/tool-result" && on.result) on.result(params);
    else if (m.method === "ui/notifications/host-context-changed" && on.context) on.context(params);
  });
  let lastHeight = 0;
  const resized = () => {
    const height = Math.ceil(document.documentElement.scrollHeight);
    if (height === lastHeight) return;
    lastHeight = height;
    notify("ui/notifications/size-changed", { width: Math.ceil(document.documentElement.scrollWidth), height });
  };
  return {
    on,
    /** Connects to the host: resolves with its answer to `ui/initialize`. */
    async connect(name) {
      const init = await request("ui/initialize", {
        appInfo: { name: "besluitbron-" + name, version: "1" },
        appCapabilities: {},
        protocolVersion: "2026-01-26",
      });
      notify("ui/notifications/initialized");
      if (typeof ResizeObserver === "function") new ResizeObserver(resized).observe(document.body);
      resized();
      return init;
    },
    /** Calls `name` with `args` through the host: its CallToolResult. */
    callTool(name, args) {
      return request("tools/call", { name, arguments: args || {} });
    },
  };
})();
