// The vote view (tk_votes): per decision its outcome, the totals, each faction's vote
// with its seats and, in a roll call, every member's vote (filtered by name).
const OUTCOME = { adopted: "Aangenomen", rejected: "Verworpen", "held over": "Aangehouden" };
const count = (t) => (t ? t.voor + t.tegen + t.niet_deelgenomen : 0);
const bar = (t) => {
  const all = count(t) || 1;
  const part = (cls, n, label) => el("span", { class: cls, style: "width:" + (100 * n / all).toFixed(2) + "%",
    title: label + ": " + n });
  return el("div", { class: "bar", role: "img", "aria-label": "Voor " + t.voor + ", tegen " + t.tegen },
    part("for", t.voor, "Voor"), part("against", t.tegen, "Tegen"), part("none", t.niet_deelgenomen, "Niet deelgenomen"));
};
const voteCell = (vote) => el("td", { class: "vote-" + String(vote).split(" ")[0] }, vote);
const factions = (r) => el("table", { class: "factions" },
  el("thead", {}, el("tr", {}, el("th", {}, "Fractie"), el("th", {}, "Zetels"), el("th", {}, "Stem"),
    el("th", {}, "Voor"), el("th", {}, "Tegen"), el("th", {}, "Niet deelgenomen"))),
  el("tbody", {}, r.factions.map((f) => el("tr", { "data-faction": f.faction },
    el("td", {}, f.faction, f.mistake ? el("span", { class: "kind", title: "vergissing: telt als uitgebracht" }, "vergissing") : null),
    el("td", { class: "n" }, f.seats === null || f.seats === undefined ? "–" : f.seats),
    voteCell(f.vote),
    el("td", { class: "n" }, f.tally.voor), el("td", { class: "n" }, f.tally.tegen),
    el("td", { class: "n" }, f.tally.niet_deelgenomen)))));
const rollCall = (r) => {
  const list = el("div", { class: "roll" });
  const fill = (words) => {
    const wanted = words.trim().toLowerCase();
    list.replaceChildren(...r.members.map((g) => {
      const names = g.names.filter((n) => !wanted || n.toLowerCase().includes(wanted));
      if (!names.length) return null;
      return el("div", { class: "group" },
        el("h3", {}, g.faction, " ", el("span", { class: "vote-" + g.vote.split(" ")[0] }, g.vote),
          g.mistake ? el("span", { class: "kind" }, "vergissing") : null),
        el("ul", { class: "members" }, names.map((n) => el("li", { class: "member" }, n))));
    }).filter(Boolean));
    if (!list.childNodes.length) list.append(el("p", { class: "muted" }, "Geen lid met “" + words + "” in de naam."));
  };
  fill("");
  return el("div", {}, el("h2", {}, "Hoofdelijke stemming"),
    el("div", { class: "row" }, el("input", { type: "search", class: "member-filter", placeholder: "Zoek een Kamerlid",
      "aria-label": "Zoek een Kamerlid", oninput: (e) => fill(e.target.value) })), list);
};
const decision = (r, state, single) => {
  const details = el("div", { class: "details" }, factions(r), r.roll_call && r.members.length ? rollCall(r) : null);
  if (!single) details.hidden = true;
  return el("section", { class: "card decision" },
    el("h2", {}, r.title || r.id),
    el("p", { class: "meta" }, line(r.id, r.kind, r.date, r.decisions > 1 ? "besluit " + r.decision_number + " van " + r.decisions : "",
      r.vote_kind, r.is_final ? "" : "nog niet definitief")),
    el("p", {}, el("span", { class: "badge outcome " + (r.outcome || "") }, OUTCOME[r.outcome] || r.decision_text || r.decision || "Geen uitslag"),
      " ", el("span", { class: "totals" }, "Voor " + r.totals.voor + " · Tegen " + r.totals.tegen
        + (r.totals.niet_deelgenomen ? " · Niet deelgenomen " + r.totals.niet_deelgenomen : ""))),
    bar(r.totals),
    el("div", { class: "row" },
      single ? null : el("button", { class: "toggle", onclick: () => { details.hidden = !details.hidden; } }, "Per fractie"),
      single ? null : el("button", { class: "open-case", onclick: () => state.call("tk_votes", { id: r.id }) }, "Alleen deze zaak"),
      link(r.url, "Op tweedekamer.nl")),
    details);
};
View("vote", (s, result, state) => {
  const results = s.results || [];
  if (!results.length) return asText(result);
  const more = s.next_offset !== undefined && s.next_offset !== null
    ? el("button", { class: "more", onclick: () => state.call("tk_votes", Object.assign({}, state.input, { offset: s.next_offset })) },
      "Volgende zaken")
    : null;
  return el("div", {},
    el("h1", {}, "Stemmingen"),
    el("p", { class: "meta" }, s.searched, s.total !== undefined && s.total !== null ? " · " + s.total + " zaken" : ""),
    results.map((r) => decision(r, state, new Set(results.map((x) => x.id)).size === 1)),
    more);
});
