// The debate view (tk_debate): the meeting, its speakers with their faction (turns and
// interruptions on this page), the turns of the page with interruptions and replies set
// apart, filtered by speaker or party (tk_debate's own filter, through the host, so the
// whole transcript is filtered), and the motions submitted.
//
// The transcript's text is the result's text content (the structured content says where
// the page is: its last `text_length` characters); each turn starts with a header line:
// `[speech] Pool (PVV):`, `[interruption] A (X) → B (Y):`, `[reply] …`, `[chair] …`.
const TURN = /^\[(speech|chair|interruption|reply)\] (.+?)(?: → (.+?))?:$/;
const OTHER = /^(\[note(?:: [^\]]*)?\]|\[vote\] .*|\[…\]|#{2,3} .*)$/;
const split = (label) => {
  const m = /^(.*?)\s*\(([^()]*)\)$/.exec(label);
  return m ? { name: m[1], faction: m[2] } : { name: label, faction: "" };
};
const pageOf = (result, s) => Array.from(textOf(result)).slice(-s.text_length).join("");
const parse = (page) => {
  const parts = [];
  let current = { kind: "continued", who: null, lines: [] };
  for (const text of page.split("\n")) {
    const turn = TURN.exec(text);
    const other = !turn && OTHER.exec(text);
    if (turn || other) {
      parts.push(current);
      current = turn
        ? { kind: turn[1], who: split(turn[2]), to: turn[3] ? split(turn[3]) : null, lines: [] }
        : { kind: text.startsWith("#") ? "heading" : "note", head: text.replace(/^#+ /, ""), lines: [] };
    } else {
      current.lines.push(text);
    }
  }
  parts.push(current);
  return parts.filter((p) => p.kind !== "continued" || p.lines.join("").trim());
};
const speakers = (parts) => {
  const by = new Map();
  for (const p of parts) {
    if (!p.who) continue;
    const key = p.who.name + "\u0000" + p.who.faction;
    const s = by.get(key) || { name: p.who.name, faction: p.who.faction, turns: 0, interruptions: 0 };
    if (p.kind === "interruption") s.interruptions++; else s.turns++;
    by.set(key, s);
  }
  return [...by.values()].sort((a, b) => (b.turns + b.interruptions) - (a.turns + a.interruptions) || a.name.localeCompare(b.name));
};
const turnNode = (p) => {
  const body = el("div", { class: "text" }, p.lines.join("\n").trim());
  if (p.kind === "heading") return el("h3", { class: "section" }, p.head);
  if (p.kind === "note") return el("div", { class: "turn note" }, el("span", { class: "kind" }, p.head), body);
  if (p.kind === "continued") return el("div", { class: "turn continued" }, el("span", { class: "kind" }, "(vervolg)"), body);
  const who = (s) => s.name + (s.faction ? " (" + s.faction + ")" : "");
  return el("div", { class: "turn " + p.kind, "data-speaker": p.who.name, "data-faction": p.who.faction },
    el("span", { class: "who" }, who(p.who)),
    p.to ? el("span", { class: "kind" }, "→ " + who(p.to)) : null,
    el("span", { class: "kind" }, { speech: "", chair: "voorzitter", interruption: "interruptie", reply: "antwoord" }[p.kind]),
    body);
};
View("debate", (s, result, state) => {
  const parts = parse(pageOf(result, s));
  const people = speakers(parts);
  const parties = [...new Set(people.map((p) => p.faction).filter(Boolean))].sort();
  const ask = (more) => state.call("tk_debate", Object.assign({ id: s.id }, more));
  const filtered = state.input.speaker || state.input.party;
  const choose = (label, values, key) => el("select", { class: "filter-" + key, "aria-label": label,
    onchange: (e) => ask(e.target.value ? { [key]: e.target.value } : {}) },
    el("option", { value: "" }, label), values.map((v) => el("option", { value: v, selected: state.input[key] === v }, v)));
  return el("div", {},
    el("h1", {}, s.title),
    el("p", { class: "meta" }, line(s.date, s.kind, s.organization, s.report_status, s.id), " ", link(s.url, "Op tweedekamer.nl")),
    el("div", { class: "row" },
      choose("Spreker", people.map((p) => p.name), "speaker"), choose("Partij", parties, "party"),
      filtered ? el("button", { class: "clear", onclick: () => ask({}) }, "Alle sprekers") : null,
      filtered ? el("span", { class: "badge" }, "gefilterd: " + filtered) : null),
    el("h2", {}, "Sprekers op deze pagina"),
    people.length ? el("table", { class: "speakers" },
      el("thead", {}, el("tr", {}, el("th", {}, "Spreker"), el("th", {}, "Fractie of functie"), el("th", {}, "Beurten"), el("th", {}, "Interrupties"))),
      el("tbody", {}, people.map((p) => el("tr", {},
        el("td", {}, el("button", { class: "link speaker", onclick: () => ask({ speaker: p.name }) }, p.name)),
        el("td", {}, p.faction ? el("button", { class: "link party", onclick: () => ask({ party: p.faction }) }, p.faction) : "–"),
        el("td", { class: "n" }, p.turns), el("td", { class: "n" }, p.interruptions)))))
      : el("p", { class: "muted" }, "Geen sprekers op deze pagina."),
    s.motions && s.motions.length ? el("div", {}, el("h2", {}, "Moties"),
      el("ul", {}, s.motions.map((m) => el("li", {}, line(m.cited, m.title, m.case_id))))) : null,
    el("h2", {}, "Verslag"),
    el("p", { class: "meta" }, "Tekens " + s.text_offset + "–" + (s.text_offset + s.text_length) + " van " + s.total_length),
    el("div", { class: "turns" }, parts.map(turnNode)),
    s.has_more ? el("button", { class: "more", onclick: () => state.call("tk_debate",
      Object.assign({}, state.input, { id: s.id, offset: s.next_offset })) }, "Volgende pagina") : null);
});
