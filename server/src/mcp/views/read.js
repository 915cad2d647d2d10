// The view of `fetch` (read): a record read by any id, drawn as its reading tool's own
// view draws it (a vote, a debate, a regulation: the view of the tool its metadata
// names, `READ_VIEWS`, written from the server's table of views) with fetch's answer
// unwrapped into that tool's result, or as its title, facts and text where the tool has
// no view. Its buttons read on through `fetch`, which takes the reading tools' own
// arguments (`date`, `article`, `speaker`, …) and passes them on.
const unwrapped = (s) => {
  const m = Object.assign({}, s.metadata || {});
  const structured = Object.assign(m, { id: m.platform_id || s.id, title: s.title, url: s.url });
  return { content: [{ type: "text", text: String(s.text || "") }], structuredContent: structured };
};
const plain = (s) => {
  const m = s.metadata || {};
  return el("div", { class: "record" },
    el("h1", {}, s.title || s.id),
    el("p", { class: "meta" }, line(m.kind, m.organization, m.date, s.id), " ", link(s.url, "bron")),
    el("div", { class: "text" }, String(s.text || "")));
};
const reading = Run("read", (s, result, state) => {
  const view = READ_VIEWS[(s.metadata || {}).tool];
  if (!view || !Renderers[view]) return plain(s);
  const inner = unwrapped(s);
  return el("div", { class: "read", "data-view": view }, Renderers[view](inner.structuredContent, inner, state));
});
const readDirectly = reading.call;
reading.call = (tool, args) => readDirectly("fetch", args);
