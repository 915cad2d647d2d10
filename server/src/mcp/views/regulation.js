// The regulation view (bwb_read, cvdr_read): the regulation as in force on a day, its
// outline to navigate (an article opens through the host with the reading tool's
// `article`), the page of text (the result's text content: its last `text_length`
// characters), and another day asked with `date`.
const pageText = (result, s) => Array.from(textOf(result)).slice(-s.text_length).join("");
View("regulation", (s, result, state) => {
  const tool = String(s.platform || "").toLowerCase() + "_read";
  const asked = state.input.id || s.id;
  const read = (more) => state.call(tool, Object.assign({ id: asked }, state.input.date ? { date: state.input.date } : {}, more));
  const day = el("input", { type: "date", class: "in-force-on", value: s.asked_date || "", "aria-label": "Geldend op" });
  const outline = el("nav", { class: "outline", "aria-label": "Inhoud" },
    (s.outline || []).map((e) => {
      const indent = "padding-left:" + (e.depth * 12) + "px";
      return e.article
        ? el("button", { class: "link article" + (e.article === s.article ? " current" : ""), style: indent,
          "data-article": e.article, onclick: () => read({ article: e.article }) }, e.label)
        : el("div", { class: "muted", style: indent }, e.label);
    }),
    s.outline_entries > (s.outline || []).length
      ? el("p", { class: "muted" }, "… " + (s.outline_entries - s.outline.length) + " onderdelen meer: open een artikel of blader door de tekst")
      : null);
  return el("div", {},
    el("h1", {}, s.title),
    el("p", { class: "meta" }, line(s.kind, s.organization, s.id), " ", link(s.url, "Officiële tekst")),
    el("p", { class: "meta validity" }, line(s.valid_from ? "geldig vanaf " + s.valid_from : "",
      s.valid_until ? "tot " + s.valid_until : "", s.asked_date ? "zoals geldend op " + s.asked_date : "")),
    el("div", { class: "row" }, el("label", {}, "Geldend op ", day),
      el("button", { class: "show-date", onclick: () => day.value && state.call(tool, { id: asked, date: day.value }) }, "Toon"),
      s.article ? el("button", { class: "whole", onclick: () => read({}) }, "Hele regeling") : null),
    el("div", { class: "split" }, outline,
      el("article", {},
        el("h2", {}, s.article ? "Artikel " + s.article : "Tekst"),
        el("p", { class: "meta" }, s.articles + " artikelen · tekens " + s.text_offset + "–" + (s.text_offset + s.text_length)
          + " van " + s.total_length),
        el("div", { class: "text regulation-text" }, pageText(result, s)),
        s.has_more ? el("button", { class: "more", onclick: () => read(Object.assign(s.article ? { article: s.article } : {},
          { offset: s.next_offset })) }, "Verder lezen") : null)));
});
