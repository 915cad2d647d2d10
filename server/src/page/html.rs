//! The pages' HTML (maud: every interpolated value is escaped). Dutch first, English
//! labels with `lang=en`.

use std::collections::HashMap;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::parts::{Group, Lang, MAX_ORGANISATION_CHARS, MAX_QUERY_CHARS};
use crate::connectors::ConnectorSpec;
use crate::connectors::page_spec::{DocView, PageQuery};

/// A label in `lang`.
pub fn t(lang: Lang, key: &str) -> &'static str {
    let (nl, en) = match key {
        "title" => (
            "BesluitBron — zoeken in overheidsbesluiten",
            "BesluitBron — search government decisions",
        ),
        "heading" => (
            "Zoeken in besluiten, stukken en uitspraken",
            "Search decisions, papers and rulings",
        ),
        "q" => ("Zoekwoorden", "Search words"),
        "from" => ("Vanaf datum", "From date"),
        "to" => ("Tot en met datum", "Up to date"),
        "org" => (
            "Organisatie (waar het platform die kent)",
            "Organisation (where the platform has one)",
        ),
        "search" => ("Zoeken", "Search"),
        "results" => ("resultaten", "results"),
        "no_hits" => (
            "Niets gevonden. Gebruik minder of andere woorden, of een ruimere periode.",
            "Nothing found. Use fewer or other words, or a wider date range.",
        ),
        "pending" => ("Nog bezig met zoeken…", "Still searching…"),
        "pending_link" => ("Toon de resultaten van dit platform", "Show this platform's results"),
        "failed" => ("Dit platform gaf geen antwoord:", "This platform gave no answer:"),
        "next" => ("Volgende resultaten", "Next results"),
        "source" => ("origineel", "original"),
        "other_lang" => ("English", "Nederlands"),
        "status" => ("Status van de platforms", "Platform status"),
        "back" => ("Terug naar zoeken", "Back to search"),
        "doc_next" => ("Verder lezen", "Read on"),
        "doc_from" => ("Tekens", "Characters"),
        "doc_of" => ("van", "of"),
        "kind" => ("soort", "kind"),
        "organisation" => ("organisatie", "organisation"),
        "date" => ("datum", "date"),
        "number" => ("nummer", "number"),
        "result" => ("uitslag", "result"),
        "note" => ("let op", "note"),
        "busy" => (
            "Te veel verzoeken vanaf dit adres. Probeer het over",
            "Too many requests from this address. Try again in",
        ),
        "seconds" => ("seconden opnieuw.", "seconds."),
        "searched" => ("Gezocht in", "Searched"),
        "lead" => (
            "Eén zoekvraag doorzoekt de platforms tegelijk, via dezelfde buffer en eerlijke wachtrij als de \
             MCP-tools van BesluitBron.",
            "One query searches the platforms at once, through the same buffer and fair queue as \
             BesluitBron's MCP tools.",
        ),
        _ => ("", ""),
    };
    if lang == Lang::En { en } else { nl }
}

fn lang_attr(lang: Lang) -> &'static str {
    if lang == Lang::En { "en" } else { "nl" }
}

/// The page frame.
pub fn frame(lang: Lang, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(lang_attr(lang)) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                link rel="stylesheet" href="/assets/page.css";
                script src="/assets/page.js" defer {}
            }
            body {
                a.skip href="#main" { (if lang == Lang::En { "Skip to content" } else { "Naar de inhoud" }) }
                header {
                    p.brand { a href=(home(lang)) { "BesluitBron" } }
                    nav aria-label=(if lang == Lang::En { "Site" } else { "Website" }) {
                        a href=(if lang == Lang::En { "/status?lang=en" } else { "/status" }) { (t(lang, "status")) }
                        " · "
                        a href=(if lang == Lang::En { "/" } else { "/?lang=en" }) lang=(if lang == Lang::En { "nl" } else { "en" }) {
                            (t(lang, "other_lang"))
                        }
                    }
                }
                main #main { (body) }
            }
        }
    }
}

fn home(lang: Lang) -> &'static str {
    if lang == Lang::En { "/?lang=en" } else { "/" }
}

/// A query string of `params` with `set` replacing (or removing, for "") its keys.
pub fn query_string(params: &HashMap<String, String>, set: &[(&str, &str)]) -> String {
    let mut keys: Vec<&String> = params.keys().collect();
    keys.sort();
    let mut out: Vec<(String, String)> = Vec::new();
    for k in keys {
        if set.iter().any(|(s, _)| s == k) || params[k].is_empty() {
            continue;
        }
        out.push((k.clone(), params[k].clone()));
    }
    for (k, v) in set {
        if !v.is_empty() {
            out.push(((*k).to_owned(), (*v).to_owned()));
        }
    }
    out.iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encodes a query component.
pub fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The search page, with the groups when a search was made.
pub fn search(
    lang: Lang,
    params: &HashMap<String, String>,
    query: &PageQuery,
    groups: Option<&[(&'static ConnectorSpec, Group)]>,
    error: Option<&str>,
) -> Markup {
    let body = html! {
        h1 { (t(lang, "heading")) }
        p.lead { (t(lang, "lead")) }
        form.search method="get" action="/" role="search" {
            @if lang == Lang::En { input type="hidden" name="lang" value="en"; }
            div.field.wide {
                label for="q" { (t(lang, "q")) }
                input #q type="search" name="q" value=(query.q) maxlength=(MAX_QUERY_CHARS) autocomplete="off";
            }
            div.field {
                label for="from" { (t(lang, "from")) }
                input #from type="date" name="from" value=(query.date_from.as_deref().unwrap_or(""));
            }
            div.field {
                label for="to" { (t(lang, "to")) }
                input #to type="date" name="to" value=(query.date_to.as_deref().unwrap_or(""));
            }
            div.field {
                label for="org" { (t(lang, "org")) }
                input #org type="text" name="org" value=(query.organisation.as_deref().unwrap_or("")) maxlength=(MAX_ORGANISATION_CHARS);
            }
            div.field { button type="submit" { (t(lang, "search")) } }
        }
        @if let Some(e) = error { p.error role="alert" { (e) } }
        @if let Some(groups) = groups {
            div.results {
                @for (c, g) in groups { (group(lang, params, c, g)) }
            }
        }
    };
    frame(lang, t(lang, "title"), body)
}

/// One platform's group (also served alone, for the script to fill a pending one in).
pub fn group(lang: Lang, params: &HashMap<String, String>, c: &ConnectorSpec, g: &Group) -> Markup {
    let name = c.platform.display_name();
    let id = format!("p-{}", c.id);
    let heading = format!("h-{}", c.id);
    let mut own: HashMap<String, String> = params.clone();
    own.retain(|k, _| !k.starts_with("n_") || k == &format!("n_{}", c.id));
    let fragment = format!("/zoek/groep/{}?{}", c.id, query_string(&own, &[]));
    html! {
        section.platform id=(id) aria-labelledby=(heading) aria-busy=(if matches!(g, Group::Pending) { "true" } else { "false" })
            data-group=(if matches!(g, Group::Pending) { fragment.as_str() } else { "" }) {
            h2 id=(heading) { (name) }
            @match g {
                Group::Pending => {
                    p.pending role="status" { (t(lang, "pending")) " " a href=(fragment) { (t(lang, "pending_link")) } }
                }
                Group::Without(why) => { p.without { (why) } }
                Group::Failed(e) if e.is_empty() => { p.without { "—" } }
                Group::Failed(e) => { p.error { (t(lang, "failed")) " " (e) } }
                Group::Done(hits) => {
                    p.count {
                        @if let Some(total) = hits.total { (total) " " (t(lang, "results")) }
                        @else { (hits.items.len()) " " (t(lang, "results")) }
                    }
                    @if let Some(note) = &hits.note { p.note { (note) } }
                    @if hits.items.is_empty() { p { (t(lang, "no_hits")) } }
                    ol.hits {
                        @for h in &hits.items {
                            li {
                                h3 {
                                    @if let Some(doc) = &h.doc_id {
                                        a href=(format!("/document/{}/{}{}", c.id, encode(doc), if lang == Lang::En { "?lang=en" } else { "" })) { (title_or(&h.title)) }
                                    } @else { (title_or(&h.title)) }
                                }
                                p.meta {
                                    @if let Some(o) = &h.organisation { span { (o) } }
                                    @if let Some(d) = &h.date { span { time { (d) } } }
                                    @if let Some(k) = &h.kind { span { (k) } }
                                    @if let Some(u) = h.source_url.as_deref().filter(|u| safe_link(u)) {
                                        span { a href=(u) rel="noopener noreferrer nofollow" { (t(lang, "source")) } }
                                    }
                                }
                            }
                        }
                    }
                    @if let Some(next) = &hits.next {
                        nav aria-label=(format!("{} {}", t(lang, "next"), name)) {
                            a.next href=(format!("/?{}", query_string(params, &[(&format!("n_{}", c.id), next)]))) { (t(lang, "next")) " — " (name) }
                        }
                    }
                }
            }
        }
    }
}

fn title_or(t: &str) -> &str {
    if t.trim().is_empty() { "(zonder titel)" } else { t }
}

/// A link the page may show: http or https only (never `javascript:` or `data:`).
pub fn safe_link(u: &str) -> bool {
    let lower = u.trim_start().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// The document view.
pub fn document(lang: Lang, c: Option<&ConnectorSpec>, view: Result<(&str, &DocView), &str>) -> Markup {
    let platform = c.map_or("", |c| c.platform.display_name());
    let body = html! {
        p { a href=(home(lang)) { (t(lang, "back")) } }
        @match view {
            Err(e) => {
                h1 { (platform) }
                p.error role="alert" { (e) }
            }
            Ok((id, v)) => {
                h1 { (title_or(&v.title)) }
                dl.meta {
                    dt { "platform" } dd { (platform) }
                    @for (k, value) in &v.meta { dt { (t(lang, k)) } dd { (value) } }
                    @if let Some(u) = v.source_url.as_deref().filter(|u| safe_link(u)) {
                        dt { (t(lang, "source")) } dd { a href=(u) rel="noopener noreferrer nofollow" { (u) } }
                    }
                }
                @let shown = v.text.chars().count();
                p.range {
                    (t(lang, "doc_from")) " " (v.offset) "–" (v.offset + shown)
                    @if let Some(total) = v.total { " " (t(lang, "doc_of")) " " (total) }
                }
                div.text { @for para in v.text.split("\n\n") { p { (para) } } }
                @if let Some(next) = v.next_offset {
                    @let c = c.map_or("", |c| c.id);
                    nav aria-label=(t(lang, "doc_next")) {
                        a.next href=(format!("/document/{c}/{}?offset={next}{}", encode(id), if lang == Lang::En { "&lang=en" } else { "" })) { (t(lang, "doc_next")) }
                    }
                }
            }
        }
    };
    let title = match view {
        Ok((_, v)) => format!("{} — BesluitBron", title_or(&v.title)),
        Err(_) => "BesluitBron".to_owned(),
    };
    frame(lang, &title, body)
}

/// The answer to an address over its client limit.
pub fn busy(lang: Lang, retry_after_secs: u64) -> Markup {
    frame(
        lang,
        "BesluitBron",
        html! { h1 { "BesluitBron" } p.error role="alert" { (t(lang, "busy")) " " (retry_after_secs) " " (t(lang, "seconds")) } },
    )
}

/// Inline markup written by us (an SVG chart of numbers only).
pub fn trusted(svg: String) -> PreEscaped<String> {
    PreEscaped(svg)
}
