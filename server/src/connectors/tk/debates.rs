//! `tk_debates`: meetings of the Tweede Kamer (plenary and committee) that have a
//! stenographic report, newest first — by days, kind, words in the meeting's title or
//! its activities' titles and subjects, committee, and speaker.
//!
//! Each request is its own platform call through the one path, admitted and counted as
//! it is asked for (R-L8), one unit each (`reports.rs`):
//! 1. with `speaker`, first the members list (`FractieZetelPersoon` with `Persoon` and
//!    `Fractie`, page by page, a month each): the name is resolved before any meeting is
//!    asked for; an ambiguous or unknown name is a tool error with the candidates;
//! 2. the page of 250 meetings that holds `offset` (`Vergadering?$expand=Verslag`, by
//!    kind and days, newest first; ten minutes);
//! 3. the reports of the meetings from `offset` on, one call each (kept for weeks, so
//!    `tk_debate` reads them from the buffer), until `limit` meetings match or
//!    [`MAX_REPORT_READS`] reports were read: what a meeting holds — its activities, its
//!    committee, who spoke — is only in its report (the platform links no meeting to its
//!    activities or speakers), so the words, `committee` and `speaker` are checked there.
//!
//! What it does not do: search the speeches' text (tk_debate reads one report), or list
//! meetings without a report.

use std::fmt::Write as _;
use std::sync::Arc;

use besluitbron_core::PlatformId;
use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::debate::page_of;
use super::ids::meeting_id;
use super::members::{Member, Resolved, folded, resolve, words};
use super::reports::{self, chosen_report, served_of};
use crate::calendar::leading_day;
use crate::call::{AnswerError, Call, Context, Rendered, Reply, Structure, provenance, tool_error};
use crate::connectors::ask::{AskArg, Resolution, ResolveFuture, Resolver, of_candidates};
use crate::connectors::offers::Choice;
use crate::connectors::tool::ToolSpec;
use crate::platforms::tk::vlos::{Part, Report, Role};
use crate::platforms::tk::{MeetingSearch, MeetingsPage, PAGE_ROWS, TkClient, Vergadering, Verslag};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// Reports one answer reads at most.
pub const MAX_REPORT_READS: usize = 10;
/// Meetings shown by default, and at most.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 10;
/// The largest `offset`.
const MAX_OFFSET: u32 = 100_000;

/// Arguments of `tk_debates`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebatesArgs {
    /// Words in a debate's title or subject (at most 10).
    #[schemars(length(max = 300))]
    #[serde(default)]
    pub query: Option<String>,
    /// First day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// `plenary` or `committee` (`tools/list` shows the choice alone: it says as much).
    #[serde(default, deserialize_with = "kind_arg")]
    #[schemars(schema_with = "kind_schema", description = "")]
    pub kind: Option<DebateKind>,
    /// Name or abbreviation (`Defensie`).
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub committee: Option<String>,
    /// A member who spoke.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub speaker: Option<String>,
    /// Default 5.
    #[schemars(range(min = 1, max = 10))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<u32>,
}

/// A kind of meeting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebateKind {
    /// The plenary (`Plenair`).
    Plenary,
    /// A committee (`Commissie`).
    Committee,
}

/// The choice, written where it is used (no definition of its own in `tools/list`).
fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["plenary", "committee"], "maxLength": 9})
}

fn kind_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DebateKind>, D::Error> {
    crate::connectors::pages::choice("kind", d)
}

/// A meeting found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DebateResult {
    /// `vergadering:<GUID>` (tk_debate and fetch read it).
    pub id: String,
    /// The meeting's title.
    pub title: String,
    /// Its day, YYYY-MM-DD.
    pub date: Option<String>,
    /// `Plenair` or `Commissie`.
    pub kind: Option<String>,
    /// `Tweede Kamer`, or the leading committee.
    pub organization: Option<String>,
    /// Its page on tweedekamer.nl.
    pub url: Option<String>,
    /// `tk`.
    pub platform: String,
    /// `tk_debate`.
    pub tool: String,
    /// `Casco`, `Ongecorrigeerd`, `Gecorrigeerd`.
    pub report_status: Option<String>,
    /// Its activities with speeches or a number: `2025A04496 Commissiedebat: MIVD`.
    pub activities: Vec<String>,
    /// With `speaker`: their turns in it (in the text).
    #[serde(skip)]
    pub speaker_turns: Option<usize>,
}

/// `tk_debates`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DebatesShown {
    /// What was asked, in words.
    pub searched: String,
    /// The meetings that match, newest first.
    pub results: Vec<DebateResult>,
    /// Meetings the platform has in the days and kind (with or without a report; not
    /// an exact count of matches), and the `offset` that reads on.
    #[serde(flatten)]
    pub tally: crate::connectors::vocabulary::Tally,
}

/// The tool.
pub(super) const TOOL: ToolSpec = crate::tool! {
    name: "tk_debates",
    title: "Tweede Kamer debates",
    description: "Meetings with a stenographic report, newest first. Only its report (Verslag) links a meeting to \
                  its debates and who spoke: 1 request + 1 per report read (at most 10, then weeks buffered); \
                  narrow by dates. `speaker`: a member, resolved first on FractieZetelPersoon (kept a month).",
    arguments: DebatesArgs,
    output: DebatesShown,
    run: tk_debates,
    asks: &[AskArg {
        argument: "speaker",
        names: "members of the Tweede Kamer",
        resolver: Resolver::Listed {
            tool: "tk_debates",
            resolve: speaker_choices,
        },
    }],
};

/// An asked `speaker` read against the members list (the one `speaker` is resolved
/// on, kept a month), for asking back: the members it fits, each by full name, read
/// with their factions; the list out of reach is no resolution.
fn speaker_choices<'a>(ctx: &'a Context, call: &'a Call, asked: &'a str) -> ResolveFuture<'a> {
    Box::pin(async move {
        let Ok(client) = ctx.clients.get::<TkClient>(PLATFORM) else {
            return Resolution::Unknown;
        };
        let Ok((members, _)) = reports::members(ctx, call, &client).await else {
            return Resolution::Unknown;
        };
        match resolve(&members, asked) {
            Resolved::One(_) => Resolution::Exact,
            Resolved::Unknown(_) => Resolution::Unknown,
            Resolved::Ambiguous(fits) => of_candidates(
                fits.into_iter()
                    .map(|m| Choice {
                        value: m.name(),
                        label: m.label(),
                    })
                    .collect(),
            ),
        }
    })
}

/// What the words, committee and speaker ask of a report.
struct Wanted<'a> {
    words: Vec<String>,
    committee: Option<String>,
    member: Option<&'a Member>,
}

impl Wanted<'_> {
    /// Whether `report` (of a meeting titled `title`) matches; with a member, their turns.
    fn check(&self, title: &str, report: &Report) -> Option<Option<usize>> {
        if !self.words.is_empty() {
            let mut hay = words(title);
            for a in &report.activities {
                for t in [&a.title, &a.subject].into_iter().flatten() {
                    hay.extend(words(t));
                }
            }
            let hay = hay.join(" ");
            if !self.words.iter().all(|w| hay.contains(w.as_str())) {
                return None;
            }
        }
        if let Some(c) = &self.committee {
            let fits = report.meeting.committees.iter().any(|m| {
                [&m.name, &m.abbreviation]
                    .into_iter()
                    .flatten()
                    .any(|n| folded(n).contains(c.as_str()))
            });
            if !fits {
                return None;
            }
        }
        match self.member {
            None => Some(None),
            Some(member) => {
                let turns = report
                    .turns()
                    .filter(|t| report.speaker(t.speaker).is_some_and(|s| member.spoke_as(s)))
                    .count();
                (turns > 0).then_some(Some(turns))
            }
        }
    }
}

/// What `tk_debates`'s arguments ask, checked before anything is asked of the platform.
struct Asked {
    limit: usize,
    offset: usize,
    query: Option<String>,
    query_words: Vec<String>,
    committee: Option<String>,
    speaker: Option<String>,
    search: MeetingSearch,
}

impl Asked {
    /// What `args` ask, or the tool's error saying what is wrong with them.
    fn of(args: &DebatesArgs) -> Result<Asked, String> {
        let limit = crate::connectors::pages::list_limit("tk_debates", args.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
        let offset = args.offset.unwrap_or(0).min(MAX_OFFSET) as usize;
        let clean = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        let query = clean(&args.query);
        let query_words = query.as_deref().map(words).unwrap_or_default();
        if query_words.len() > crate::platforms::tk::MAX_WORDS {
            return Err(format!(
                "tk_debates: `query` must hold at most {} words, not {} (nothing asked of the Tweede Kamer)",
                crate::platforms::tk::MAX_WORDS,
                query_words.len()
            ));
        }
        let search = MeetingSearch {
            kind: args.kind.map(|k| match k {
                DebateKind::Plenary => "Plenair".to_owned(),
                DebateKind::Committee => "Commissie".to_owned(),
            }),
            date_from: clean(&args.date_from),
            date_to: clean(&args.date_to),
        };
        search.filter().map_err(|e| e.to_string())?;
        Ok(Asked {
            limit,
            offset,
            query,
            query_words,
            committee: clean(&args.committee),
            speaker: clean(&args.speaker),
            search,
        })
    }
}

/// Meetings with a report.
pub(super) async fn tk_debates(ctx: &Context, call: &Call, args: DebatesArgs) -> Reply {
    let asked = match Asked::of(&args) {
        Ok(asked) => asked,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let mut servings: Vec<Served> = Vec::new();
    // The speaker, resolved against the members list before any meeting is asked for.
    let member = match speaker_of(ctx, call, &client, asked.speaker.as_deref(), &mut servings).await {
        Ok(member) => member,
        Err(reply) => return reply,
    };
    let member = member.as_ref();
    let wanted = Wanted {
        words: asked.query_words,
        committee: asked.committee.map(|c| folded(&c)),
        member,
    };
    let searched = describe(&asked.search, asked.query.as_deref(), args.committee.as_deref(), member);
    let rows = PAGE_ROWS as usize;
    let base = asked.offset / rows * rows;
    let (page, served) = match reports::meetings(ctx, call, &client, &asked.search, base as u64).await {
        Ok(page) => page,
        Err(e) => return e.into(),
    };
    servings.push(served);
    let reading = Reading {
        page: &page,
        from: asked.offset - base,
        limit: asked.limit,
        wanted: &wanted,
    };
    let (results, read, at) = match reading.matching(ctx, call, &client, &mut servings).await {
        Ok(found) => found,
        Err(e) => return e.into(),
    };
    let more_here = at < page.meetings.len();
    let next_offset = (more_here || page.more).then(|| {
        if more_here {
            base + at
        } else {
            base + page.meetings.len()
        }
    });
    render(
        &searched,
        &results,
        read,
        base,
        at,
        page.count,
        next_offset,
        served_of(&servings),
        member,
    )
    .into_own_result()
    .into()
}

/// The member `speaker` names, resolved against the members list, which is asked for
/// only when a speaker is given (how it was served added to `servings`); a name that
/// fits several members, or none, is the tool's error with the candidates.
async fn speaker_of(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    speaker: Option<&str>,
    servings: &mut Vec<Served>,
) -> Result<Option<Member>, Reply> {
    let Some(name) = speaker else {
        return Ok(None);
    };
    let members = match reports::members(ctx, call, client).await {
        Ok((members, served)) => {
            servings.push(served);
            members
        }
        Err(e) => return Err(e.into()),
    };
    match resolve(&members, name) {
        Resolved::One(m) => Ok(Some(m.clone())),
        Resolved::Ambiguous(candidates) => {
            let listed: Vec<String> = candidates.iter().map(|m| format!("`{}`", m.label())).collect();
            Err(tool_error(format!(
                "tk_debates: `{}` fits {} members of the Tweede Kamer: {}; give the full name (no meeting was \
                 asked for)",
                crate::platforms::http::brief(name),
                candidates.len(),
                listed.join(", ")
            ))
            .into())
        }
        Resolved::Unknown(close) => {
            let hint = if close.is_empty() {
                String::new()
            } else {
                let listed: Vec<String> = close.iter().map(|m| format!("`{}`", m.label())).collect();
                format!("; the closest: {}", listed.join(", "))
            };
            Err(tool_error(format!(
                "tk_debates: no member of the Tweede Kamer is named `{}` in its members list{hint}. A minister \
                 or another speaker: find the meeting by dates or `query`, then tk_debate with `speaker` (no \
                 meeting was asked for)",
                crate::platforms::http::brief(name)
            ))
            .into())
        }
    }
}

/// The reading of a page of meetings' reports: from the meeting at `from`, until `limit`
/// match `wanted` or [`MAX_REPORT_READS`] reports were read.
struct Reading<'a> {
    page: &'a MeetingsPage,
    from: usize,
    limit: usize,
    wanted: &'a Wanted<'a>,
}

impl Reading<'_> {
    /// The matching meetings, the reports read and where on the page the reading
    /// stopped; how each report was served is added to `servings`.
    async fn matching(
        &self,
        ctx: &Context,
        call: &Call,
        client: &Arc<TkClient>,
        servings: &mut Vec<Served>,
    ) -> Result<(Vec<DebateResult>, usize, usize), AnswerError> {
        let mut results = Vec::new();
        let mut read = 0;
        let mut at = self.from;
        while at < self.page.meetings.len() && results.len() < self.limit && read < MAX_REPORT_READS {
            let m = &self.page.meetings[at];
            at += 1;
            let Some(verslag) = chosen_report(&m.verslagen) else {
                continue;
            };
            let (report, served) = reports::report(ctx, call, client, verslag).await?;
            servings.push(served);
            read += 1;
            let v = &m.vergadering;
            let title = v
                .titel
                .clone()
                .or_else(|| report.meeting.title.clone())
                .unwrap_or_default();
            let Some(turns) = self.wanted.check(&title, &report) else {
                continue;
            };
            results.push(result_of(v, verslag, &report, title, turns));
        }
        Ok((results, read, at))
    }
}

/// The result for meeting `v` whose report `verslag` (read: `report`) matched, titled
/// `title`, with the speaker's `turns` when a speaker was asked for.
fn result_of(v: &Vergadering, verslag: &Verslag, report: &Report, title: String, turns: Option<usize>) -> DebateResult {
    let kind = v.soort.clone().or_else(|| report.meeting.kind.clone());
    DebateResult {
        id: meeting_id(&v.id),
        url: page_of(v, report, kind.as_deref()),
        title,
        date: v
            .datum
            .as_deref()
            .or(report.meeting.date.as_deref())
            .and_then(leading_day)
            .map(str::to_owned),
        kind,
        organization: Some(
            report
                .meeting
                .committees
                .iter()
                .find(|c| c.role.as_deref() == Some("Voortouwcommissie"))
                .or(report.meeting.committees.first())
                .and_then(|c| c.name.clone())
                .unwrap_or_else(|| "Tweede Kamer".to_owned()),
        ),
        platform: "tk".to_owned(),
        tool: "tk_debate".to_owned(),
        report_status: verslag.status.clone().or_else(|| report.status.clone()),
        activities: debates_in(report),
        speaker_turns: turns,
    }
}

/// The activities of a report worth listing (a number or speeches): `2025A04496
/// Commissiedebat: MIVD — 27 speeches`.
fn debates_in(report: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &report.activities {
        let speeches = a
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Turn(t) if !t.chair && !matches!(t.role, Role::Interruption { .. })))
            .count();
        if a.number.is_none() && speeches == 0 {
            continue;
        }
        let mut line = a.number.as_deref().map(|n| format!("{n} ")).unwrap_or_default();
        match (&a.kind, &a.title) {
            (Some(k), Some(t)) if k != t => {
                let _ = write!(line, "{k}: {t}");
            }
            (_, Some(t)) => line.push_str(t),
            (Some(k), None) => line.push_str(k),
            (None, None) => line.push_str("(untitled)"),
        }
        if speeches > 0 {
            let _ = write!(line, " — {speeches} speech{}", if speeches == 1 { "" } else { "es" });
        }
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

fn describe(search: &MeetingSearch, query: Option<&str>, committee: Option<&str>, member: Option<&Member>) -> String {
    let mut parts = Vec::new();
    if let Some(q) = query {
        parts.push(format!("words `{q}`"));
    }
    if let Some(k) = &search.kind {
        parts.push(format!("kind {k}"));
    }
    if let Some(c) = committee.map(str::trim).filter(|c| !c.is_empty()) {
        parts.push(format!("committee `{c}`"));
    }
    if let Some(m) = member {
        parts.push(format!("speaker {}", m.label()));
    }
    match (&search.date_from, &search.date_to) {
        (Some(f), Some(t)) => parts.push(format!("from {f} to {t}")),
        (Some(f), None) => parts.push(format!("from {f}")),
        (None, Some(t)) => parts.push(format!("until {t}")),
        (None, None) => parts.push("any day".to_owned()),
    }
    parts.join(", ")
}

#[allow(clippy::too_many_arguments)]
fn render(
    searched: &str,
    results: &[DebateResult],
    read: usize,
    base: usize,
    at: usize,
    count: Option<u64>,
    next_offset: Option<usize>,
    served: Served,
    member: Option<&Member>,
) -> Rendered {
    let looked = format!(
        "meetings {}–{} of {} at the platform, newest first; {read} report{} read",
        base + 1,
        base + at,
        count.map_or("?".to_owned(), |c| c.to_string()),
        if read == 1 { "" } else { "s" }
    );
    let mut text = if results.is_empty() {
        format!(
            "No Tweede Kamer meeting with a report matches {searched}{} among {looked}. To widen: fewer or other \
             words (they must occur in a meeting's or debate's title or subject, not the speeches), another \
             committee spelling, wider dates{}.",
            provenance(served),
            if next_offset.is_some() {
                ", or read on with `offset` (older meetings)"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Tweede Kamer meetings with a report for {searched}{}: {} shown ({looked}).",
            provenance(served),
            results.len()
        )
    };
    for (i, r) in results.iter().enumerate() {
        let _ = write!(
            text,
            "\n\n{}. {} — {} ({}{}; report {})\n   id {}",
            i + 1,
            r.date.as_deref().unwrap_or("no date"),
            r.title,
            r.kind.as_deref().unwrap_or("kind not given"),
            r.organization
                .as_deref()
                .filter(|o| *o != "Tweede Kamer")
                .map(|o| format!(", {o}"))
                .unwrap_or_default(),
            r.report_status.as_deref().unwrap_or("status not given"),
            r.id
        );
        if let (Some(turns), Some(m)) = (r.speaker_turns, member) {
            let _ = write!(
                text,
                "; {} spoke {turns} time{}",
                m.name(),
                if turns == 1 { "" } else { "s" }
            );
        }
        for a in &r.activities {
            let _ = write!(text, "\n   {a}");
        }
        if let Some(url) = &r.url {
            let _ = write!(text, "\n   {url}");
        }
    }
    if let Some(next) = next_offset {
        let _ = write!(text, "\n\nMore meetings: call tk_debates again with `offset` {next}.");
    }
    if !results.is_empty() {
        text.push_str("\nRead one with tk_debate (`id`; `speaker`, `party`, `activity` narrow it).");
    }
    let shown = DebatesShown {
        searched: searched.to_owned(),
        results: results.to_vec(),
        tally: crate::connectors::vocabulary::Tally {
            total: count,
            total_is_exact: false,
            next_offset: next_offset.map(|n| n as u64),
        },
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_a_closed_choice_and_limits_are_plain_integers() {
        let schema = serde_json::to_value(schemars::schema_for!(DebatesArgs)).unwrap();
        assert_eq!(schema["properties"]["limit"]["maximum"], 10);
        assert_eq!(schema["properties"]["kind"]["enum"], json!(["plenary", "committee"]));
        assert!(
            schema["properties"]["kind"].get("description").is_none(),
            "the choice says it"
        );
        let bad: Result<DebatesArgs, _> = serde_json::from_value(json!({"kind": "plenair"}));
        assert!(bad.unwrap_err().to_string().contains("`kind`"));
    }
}
