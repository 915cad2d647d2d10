// What every view shares: elements made from text only (never markup from a string),
// the text of a result, and the frame of a view (a result in, a page out; a result
// without structured content shown as its text).
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    // Through the CSSOM: the policy allows no style attribute.
    else if (key === "style") node.style.cssText = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key === "onchange") node.addEventListener("change", value);
    else if (key === "oninput") node.addEventListener("input", value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};
const textOf = (result) => ((result && result.content) || [])
  .filter((c) => c && c.type === "text").map((c) => String(c.text)).join("\n");
const main = () => document.getElementById("view");
const show = (...nodes) => main().replaceChildren(...nodes);
const asText = (result) => el("div", { class: result && result.isError ? "error" : "" },
  el("p", { class: "text" }, textOf(result) || "No answer."));
// A link to a platform's page: only http(s), opened by the host's browser.
const link = (url, label) => (/^https?:\/\//.test(String(url || ""))
  ? el("a", { href: String(url), target: "_blank", rel: "noopener noreferrer" }, label || String(url))
  : null);
const line = (...parts) => parts.filter((p) => p !== undefined && p !== null && p !== "").join(" · ");
// Every view's renderer by its name: a view's script registers its own with `View`;
// the page runs the one it is (`Run`), or `fetch`'s view picks one per answer.
const Renderers = {};
const View = (name, render) => { Renderers[name] = render; };
// Runs a view: `render(structured, result, state)` draws a result with structured
// content. `state.ask(tool, args)` calls a tool through the host (its result);
// `state.call(tool, args)` calls one whose result this view draws, and draws it.
const Run = (name, render) => {
  const state = { input: {}, result: null };
  const draw = (result) => {
    state.result = result;
    if (!result || result.isError || !result.structuredContent) show(asText(result));
    else show(render(result.structuredContent, result, state));
  };
  state.ask = (tool, args) => Bridge.callTool(tool, args);
  state.call = async (tool, args) => {
    main().setAttribute("aria-busy", "true");
    try {
      const result = await Bridge.callTool(tool, args);
      state.input = args;
      draw(result);
    } catch (e) {
      main().prepend(el("p", { class: "error" }, "The host could not call " + tool + ": " + e.message));
    } finally {
      main().removeAttribute("aria-busy");
    }
  };
  Bridge.on.input = (params) => { state.input = params.arguments || {}; };
  Bridge.on.result = draw;
  Bridge.connect(name).catch((e) => show(el("p", { class: "error" }, "No host: " + e.message)));
  return state;
};
