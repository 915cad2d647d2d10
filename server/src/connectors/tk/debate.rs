//! `tk_debate`: one stenographic report of the Tweede Kamer read as a transcript — per
//! activity (debate) the speeches in order with the speaker's faction or function, the
//! chair's remarks apart, interruptions attributed to the one who interrupts with the
//! reply that follows — paged by characters (`transcript.rs` renders it).
//!
//! What it reads, by `id`: a meeting (`vergadering:<GUID>`, what tk_debates gives, or a
//! bare GUID), a report (`verslag:<GUID>`, or a bare GUID that is no meeting), an
//! activity number (`2025A04597`), or a link to any of these, or to a plenary report's
//! page. Each request is its own platform call through the one path, admitted and
//! counted as it is asked for (R-L8), one unit each (`reports.rs`):
//! 1. the meeting's record with its reports (`Vergadering({id})?$expand=Verslag`, kept
//!    ten minutes: it names the report's version), or the report's with its meeting;
//!    for an activity number first the activity (`Activiteit`, a month) and the meetings
//!    of its day (ten minutes), then the reports of that day's meetings, most likely
//!    first, until one holds the activity (at most [`MAX_ACTIVITY_READS`]);
//! 2. the report (`Verslag({id})/resource`, kept for weeks under its id and
//!    `GewijzigdOp`: a corrected version is read anew);
//! 3. the cases of the motions submitted in the activities shown (`Zaak` by dossier and
//!    number, one request for up to 30, a month), so each motion's votes read with
//!    tk_votes.
//!
//! What it does not do: search (tk_debates does), or read a report in any other format.

use std::sync::Arc;

use besluitbron_core::PlatformId;
use besluitbron_core::path::Served;
use rmcp::schemars;
use serde::Deserialize;

use super::ids::{DocumentRef, Named, meeting_id, named};
use super::reports::{self, chosen_report, served_of};
use super::transcript::{self, About, CaseNumbers, DebateShown, Filters};
use crate::calendar::leading_day;
use crate::call::{AnswerError, Call, Context, Head, Read, ReadResult, Reply, replied, tool_error};
use crate::connectors::tool::ToolSpec;
use crate::driver::CallError;
use crate::platforms::http::PlatformError;
use crate::platforms::tk::vlos::Report;
use crate::platforms::tk::{MeetingSearch, TkClient, Vergadering, Verslag};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// Reports of an activity's day read at most to find the one that holds it.
pub const MAX_ACTIVITY_READS: usize = 6;
/// Requests for motions' cases one answer makes at most (30 motions each).
const MAX_MOTION_REQUESTS: usize = 2;

/// Arguments of `tk_debate`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebateArgs {
    /// tk_debates's `id`, `verslag:<GUID>`, an activity number or a link.
    #[schemars(length(max = 300))]
    pub id: String,
    /// Their turns and exchanges only.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub speaker: Option<String>,
    /// Only this faction's turns (`PVV`).
    #[schemars(length(max = 60))]
    #[serde(default)]
    pub party: Option<String>,
    /// One activity: its number or place.
    #[schemars(length(max = 20))]
    #[serde(default)]
    pub activity: Option<String>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 8000).
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(default)]
    pub length: Option<usize>,
}

/// The tool.
pub(super) const TOOL: ToolSpec = crate::tool! {
    name: "tk_debate",
    title: "Tweede Kamer debate",
    description: "A meeting's stenographic report as a transcript: speeches with faction or function, the chair \
                  apart, interruptions attributed to the interrupter, motions with case numbers (tk_votes), votes. \
                  2-3 requests first (by activity number up to 8), then weeks buffered.",
    arguments: DebateArgs,
    output: DebateShown,
    run: tk_debate,
    read: debate_read,
};

/// What `id` asks for.
enum Target {
    /// A meeting, or (a bare GUID) a report.
    MeetingOrReport(String),
    Meeting(String),
    Report(String),
    Activity(String),
    Plenary(String, u32),
}

fn target(id: &str) -> Option<Target> {
    Some(match named(crate::connectors::ids::own(PLATFORM, id))? {
        Named::Document(DocumentRef::Guid(g)) => Target::MeetingOrReport(g),
        Named::Meeting(g) => Target::Meeting(g),
        Named::Report(g) => Target::Report(g),
        Named::Activity(n) => Target::Activity(n),
        Named::Plenary { year, number } => Target::Plenary(year, number),
        Named::Document(DocumentRef::Number(_)) | Named::Case(_) => return None,
    })
}

/// The meeting, the report to read, and how the records were served.
struct Found {
    meeting: Vergadering,
    verslag: Verslag,
    /// The report, when finding it already read it (an activity's day).
    report: Option<(Arc<Report>, Served)>,
    /// An activity to narrow to (the number asked).
    activity: Option<String>,
    servings: Vec<Served>,
}

fn not_found(what: String) -> AnswerError {
    AnswerError::Call(CallError::Platform(PlatformError::NotFound {
        platform: PLATFORM,
        what,
    }))
}

fn no_report(meeting: &Vergadering) -> AnswerError {
    not_found(format!(
        "report of meeting {} ({}): the meeting has none yet (a report follows within hours to days)",
        meeting.id,
        meeting.titel.as_deref().unwrap_or("untitled")
    ))
}

/// Finds the meeting and the report `target` names.
async fn find(ctx: &Context, call: &Call, client: &Arc<TkClient>, target: Target) -> Result<Found, AnswerError> {
    let from_meeting = |m: &crate::platforms::tk::VergaderingVerslagen, served: Served| {
        let verslag = chosen_report(&m.verslagen)
            .cloned()
            .ok_or_else(|| no_report(&m.vergadering))?;
        Ok(Found {
            meeting: m.vergadering.clone(),
            verslag,
            report: None,
            activity: None,
            servings: vec![served],
        })
    };
    match target {
        Target::Meeting(id) => {
            let (m, served) = reports::meeting(ctx, call, client, &id).await?;
            from_meeting(&m, served)
        }
        Target::Plenary(year, number) => {
            let (m, served) = reports::plenary_meeting(ctx, call, client, &year, number).await?;
            from_meeting(&m, served)
        }
        Target::Report(id) => report_of(ctx, call, client, &id).await,
        Target::MeetingOrReport(id) => match reports::meeting(ctx, call, client, &id).await {
            Ok((m, served)) => from_meeting(&m, served),
            Err(AnswerError::Call(CallError::Platform(PlatformError::NotFound { .. }))) => {
                report_of(ctx, call, client, &id).await.map_err(|e| match e {
                    AnswerError::Call(CallError::Platform(PlatformError::NotFound { .. })) => {
                        not_found(format!("meeting or report {id}"))
                    }
                    other => other,
                })
            }
            Err(e) => Err(e),
        },
        Target::Activity(number) => activity_of(ctx, call, client, &number).await,
    }
}

async fn report_of(ctx: &Context, call: &Call, client: &Arc<TkClient>, id: &str) -> Result<Found, AnswerError> {
    let (r, served) = reports::report_record(ctx, call, client, id).await?;
    if r.verslag.verwijderd {
        return Err(not_found(format!("report {id} (withdrawn by the platform)")));
    }
    let meeting = r.vergadering.clone().unwrap_or_else(|| Vergadering {
        id: r.verslag.vergadering_id.clone().unwrap_or_default(),
        ..Vergadering::default()
    });
    Ok(Found {
        meeting,
        verslag: r.verslag.clone(),
        report: None,
        activity: None,
        servings: vec![served],
    })
}

/// The meeting whose report holds the activity `number`: the activity's day, its
/// meetings (of a plenary kind first for a plenary activity, else those titled as its
/// subject), their reports read until one holds it.
async fn activity_of(ctx: &Context, call: &Call, client: &Arc<TkClient>, number: &str) -> Result<Found, AnswerError> {
    let (activity, served) = reports::activity(ctx, call, client, number).await?;
    let mut servings = vec![served];
    let Some(date) = activity.datum.as_deref().and_then(leading_day).map(str::to_owned) else {
        return Err(not_found(format!("the day of activity {number}")));
    };
    let search = MeetingSearch {
        kind: None,
        date_from: Some(date.clone()),
        date_to: Some(date.clone()),
    };
    let (page, served) = reports::meetings(ctx, call, client, &search, 0).await?;
    servings.push(served);
    let plenary = activity
        .soort
        .as_deref()
        .map(str::to_lowercase)
        .is_some_and(|s| s.contains("plenair") || s.contains("stemmingen") || s.contains("vragenuur"));
    let subject = activity.onderwerp.as_deref().unwrap_or("").to_lowercase();
    let mut candidates: Vec<_> = page
        .meetings
        .iter()
        .filter_map(|m| chosen_report(&m.verslagen).map(|v| (m, v)))
        .collect();
    candidates.sort_by_key(|(m, _)| {
        let is_plenary = m.vergadering.soort.as_deref() == Some("Plenair");
        let titled = m
            .vergadering
            .titel
            .as_deref()
            .is_some_and(|t| !subject.is_empty() && subject.contains(&t.to_lowercase()));
        (is_plenary != plenary, !titled)
    });
    for (m, verslag) in candidates.into_iter().take(MAX_ACTIVITY_READS) {
        let (report, served) = reports::report(ctx, call, client, verslag).await?;
        servings.push(served);
        let holds = report
            .activities
            .iter()
            .any(|a| a.number.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(number)));
        if holds {
            return Ok(Found {
                meeting: m.vergadering.clone(),
                verslag: verslag.clone(),
                report: Some((report, served)),
                activity: Some(number.to_owned()),
                servings,
            });
        }
    }
    Err(not_found(format!(
        "report of activity {number} ({}, {date}): no report of that day's meetings holds it yet (read the \
         meeting's report with tk_debates and its date)",
        activity.onderwerp.as_deref().unwrap_or("no subject")
    )))
}

/// One meeting's report as a transcript.
pub(super) async fn tk_debate(ctx: &Context, call: &Call, args: DebateArgs) -> Reply {
    replied(debate_read(ctx, call, args).await)
}

/// One meeting's report read, typed (`tk_debate`'s answer, and `fetch`'s): the head is
/// the meeting, its title and its page on tweedekamer.nl.
pub(super) async fn debate_read(ctx: &Context, call: &Call, args: DebateArgs) -> ReadResult {
    let Some(target) = target(&args.id) else {
        return Err(tool_error(format!(
            "tk_debate: `{}` is not a meeting, report or activity of the Tweede Kamer: give the `id` tk_debates \
             gives (vergadering:<GUID>), a report's id (verslag:<GUID>), an activity number (2025A04597) or a \
             link to its page; a document reads with tk_document_text, a case's votes with tk_votes (nothing asked \
             of the Tweede Kamer)",
            crate::platforms::http::brief(&args.id)
        ))
        .into());
    };
    let length = match crate::connectors::pages::text_length("tk_debate", args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let found = match find(ctx, call, &client, target).await {
        Ok(found) => found,
        Err(e) => return Err(e.into()),
    };
    let mut servings = found.servings;
    let (report, served) = match found.report {
        Some(read) => read,
        None => match reports::report(ctx, call, &client, &found.verslag).await {
            Ok(read) => read,
            Err(e) => return Err(e.into()),
        },
    };
    servings.push(served);
    let clean = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let filters = Filters {
        speaker: clean(args.speaker),
        party: clean(args.party),
        activity: clean(args.activity).or(found.activity),
    };
    // The motions of the activities shown, and their cases (one request for up to 30).
    let chosen = match transcript::selected(&report, filters.activity.as_deref()) {
        Ok(chosen) => chosen,
        Err(message) => return Err(tool_error(format!("tk_debate: {message}")).into()),
    };
    let motions = transcript::motions_asked(&report, &chosen);
    let mut cases = CaseNumbers::new();
    if !motions.is_empty() {
        match reports::motion_cases(ctx, call, &client, &motions, MAX_MOTION_REQUESTS).await {
            Ok((found, served)) => {
                servings.extend(served);
                for m in &motions {
                    if let Some(number) = found.iter().find(|z| m.is_case(z)).and_then(|z| z.nummer.clone()) {
                        cases.insert(m.cited(), number);
                    }
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    let meeting = &found.meeting;
    let title = meeting
        .titel
        .clone()
        .or_else(|| report.meeting.title.clone())
        .unwrap_or_else(|| "(untitled meeting)".to_owned());
    let kind = meeting.soort.clone().or_else(|| report.meeting.kind.clone());
    let url = page_of(meeting, &report, kind.as_deref());
    let about = About {
        id: meeting_id(if meeting.id.is_empty() {
            &found.verslag.id
        } else {
            &meeting.id
        }),
        title,
        date: meeting
            .datum
            .as_deref()
            .or(report.meeting.date.as_deref())
            .and_then(leading_day)
            .map(str::to_owned),
        kind,
        url,
        report_id: found.verslag.id.to_ascii_lowercase(),
        changed_at: found.verslag.gewijzigd_op.clone(),
        file_url: client.report_file_url(&found.verslag.id.to_ascii_lowercase()),
    };
    let head = Head::new(about.title.clone(), about.url.clone());
    match transcript::render(&report, &about, &filters, &cases, served_of(&servings), offset, length) {
        Ok(rendered) => Ok(Read::own(PLATFORM, head, rendered)),
        Err(message) => Err(tool_error(format!("tk_debate: {message}")).into()),
    }
}

/// A meeting's page on tweedekamer.nl: a plenary meeting's report page, else its first
/// debate's page.
pub fn page_of(meeting: &Vergadering, report: &Report, kind: Option<&str>) -> Option<String> {
    let number = meeting
        .vergadering_nummer
        .or_else(|| report.meeting.number.as_deref().and_then(|n| n.parse().ok()));
    let year = meeting.vergaderjaar.clone().or_else(|| report.meeting.year.clone());
    match (kind, year, number) {
        (Some("Plenair"), Some(year), Some(number)) => Some(TkClient::plenary_page(&year, number)),
        _ => report.activities.iter().find_map(|a| {
            a.number
                .as_deref()
                .map(|n| TkClient::activity_page(n, a.kind.as_deref()))
        }),
    }
}
