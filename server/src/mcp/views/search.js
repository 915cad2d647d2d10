// The search view (`search`): its results per platform, with each platform's status
// (answered, none found, failed: its message), and each record opened with `fetch`
// through the host, in place.
const STATUS = { ok: "beantwoord", failed: "mislukt", pending: "nog bezig", no_keyword_search: "zoekt niet op woorden" };
const opened = (result) => {
  const s = result.structuredContent || {};
  return el("div", { class: "opened" + (result.isError ? " error" : "") },
    result.isError ? null : el("p", { class: "meta" }, line(s.title, s.kind, s.date)),
    el("div", { class: "text" }, textOf(result)));
};
const record = (r, state) => {
  const place = el("div", { class: "record-body" });
  const open = async () => {
    place.replaceChildren(el("p", { class: "muted" }, "Bezig met openen…"));
    try {
      place.replaceChildren(opened(await state.ask("fetch", { id: r.id })));
    } catch (e) {
      place.replaceChildren(el("p", { class: "error" }, "The host could not call fetch: " + e.message));
    }
  };
  return el("li", { class: "record", "data-id": r.id },
    el("button", { class: "link open", onclick: open }, r.title || r.id),
    el("div", { class: "meta" }, line(r.kind, r.organization, r.date, r.id), " ", link(r.url, "bron")),
    place);
};
View("search", (s, result, state) => {
  const byPlatform = new Map();
  for (const r of s.results || []) {
    if (!byPlatform.has(r.platform)) byPlatform.set(r.platform, []);
    byPlatform.get(r.platform).push(r);
  }
  const platforms = s.platforms || [];
  return el("div", {},
    el("h1", {}, "Zoekresultaten"),
    el("p", { class: "meta" }, "“" + s.query + "” · " + (s.results || []).length + " resultaten"),
    (s.results || []).length ? null : el("p", { class: "card empty" }, "Geen resultaten voor “" + s.query
      + "”: wat elk platform zegt staat hieronder (minder of andere woorden, of geen datums, verbreedt de zoekvraag)."),
    platforms.map((p) => {
      const found = byPlatform.get(p.platform) || [];
      return el("section", { class: "card platform", "data-platform": p.platform },
        el("h2", {}, p.name, " ", el("span", { class: "badge status" }, STATUS[p.status] || p.status),
          el("span", { class: "kind" }, p.total !== undefined && p.total !== null ? p.shown + " van " + p.total : p.shown + " getoond")),
        p.message ? el("p", { class: p.status === "failed" ? "error" : "muted" }, p.message) : null,
        found.length ? el("ul", {}, found.map((r) => record(r, state))) : null);
    }));
});
