//! A report as an assistant reads it (`tk_debate`): pure functions from a kept
//! [`Report`] and what was asked to text and structured content.
//!
//! The transcript is one text in document order, paged by characters: each activity
//! under a `## ` heading (its number, kind and title), each section under `### `, and
//! each turn a header line and its text —
//! `[speech] Pool (PVV):`, `[chair] Kahraman (NSC):`,
//! `[interruption] Olger van Dijk (NSC) → Pool (PVV):` (the one who interrupts first, then
//! whom), `[reply] Pool (PVV) → Olger van Dijk (NSC):`; text that is no speech as
//! `[note]` or `[note: Motie indiening]`, a vote as `[vote]`. A speaker is named as the
//! report names them, with their faction, or for ministers and external speakers (who
//! have none) their function.
//!
//! Filters ([`Filters`]): `speaker` and `party` keep the turns of the speakers they match
//! and the exchanges those are in (an interruption of them, the reply to their
//! interruption), and the notes right after a kept turn (a motion read out); `activity`
//! keeps one activity (its number, every part of it, or its place in the list). A gap is
//! `[…]`.
//!
//! The header says what meeting, which report (kind, status, version, its change date),
//! the activities, the motions submitted with their case numbers (read with `tk_votes`)
//! and the votes; its long lists only on the first page. A casco report (no speeches
//! yet) says so, and lists the speakers and cases it names.
//!
//! What this module does not do: ask anything, or choose the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::members::words;
use crate::call::{Rendered, Structure, provenance};
use crate::connectors::pages::{TextPage, text_page};
use crate::platforms::tk::DossierNumber;
use crate::platforms::tk::vlos::{Activity, Meeting, Part, Report, Role, Speaker};

/// Motions, votes and activities the structured content lists at most.
const MAX_LISTED: usize = 40;
/// Motions and votes the first page's header lists at most.
const MAX_HEADER_LINES: usize = 8;

/// What `tk_debate` keeps of a report: what it was read as.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct About {
    /// The meeting's id as tools read it: `vergadering:<GUID>`.
    pub id: String,
    /// The meeting's title (the platform's, else the report's).
    pub title: String,
    /// The meeting's day, YYYY-MM-DD.
    pub date: Option<String>,
    /// `Plenair` or `Commissie`.
    pub kind: Option<String>,
    /// The meeting's page on tweedekamer.nl, where there is one.
    pub url: Option<String>,
    /// The report's id (`Verslag`).
    pub report_id: String,
    /// The report's last change (`GewijzigdOp`).
    pub changed_at: Option<String>,
    /// The report's file at the platform.
    pub file_url: Option<String>,
}

/// What to show of a report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// Words of a speaker's name.
    pub speaker: Option<String>,
    /// A faction.
    pub party: Option<String>,
    /// An activity: its number or its place (1-based).
    pub activity: Option<String>,
}

/// The case numbers of motions, by how the report cites them (`36284-45`).
pub type CaseNumbers = BTreeMap<String, String>;

/// An activity as the structured content lists it (its place in the list, 1-based, is
/// what `activity` takes besides its number).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityShown {
    /// Its place in the report, 1-based (not shown: the list's order says it).
    #[serde(skip)]
    pub place: usize,
    /// Its number, e.g. `2025A04597` (what `activity` and `id` take).
    pub number: Option<String>,
    /// Its kind.
    pub kind: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Speeches and replies in it (in the text only).
    #[serde(skip)]
    pub speeches: usize,
    /// Interruptions in it, not the chair's (in the text only).
    #[serde(skip)]
    pub interruptions: usize,
}

/// A motion as the structured content lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MotionShown {
    /// How the Kamer cites it: dossier and number, `36284-45`.
    pub cited: Option<String>,
    /// Its title as the report gives it.
    pub title: Option<String>,
    /// Its case number (`tk_votes` `id`), where the platform has it.
    pub case_id: Option<String>,
}

/// A vote as the structured content lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VoteShown {
    /// What was voted on: the section's title.
    pub subject: Option<String>,
    /// `Aangenomen`, `Verworpen`.
    pub result: Option<String>,
    /// `Fractie` or `Hoofdelijk` (in the text only).
    #[serde(skip)]
    pub form: Option<String>,
    /// The factions for.
    pub voor: Vec<String>,
    /// The factions against.
    pub tegen: Vec<String>,
}

/// `tk_debate`'s structured content: the meeting and report, its activities, motions
/// and votes, and where the page of the transcript (the text content) is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DebateShown {
    /// The meeting: `vergadering:<GUID>` (tk_debate and fetch read it).
    pub id: String,
    /// The meeting's title.
    pub title: String,
    /// Its day, YYYY-MM-DD.
    pub date: Option<String>,
    /// `Plenair` or `Commissie`.
    pub kind: Option<String>,
    /// `Tweede Kamer`, or the leading committee.
    pub organization: String,
    /// Its page on tweedekamer.nl.
    pub url: Option<String>,
    /// `tk`.
    pub platform: String,
    /// The report read (`Verslag` id).
    pub report_id: String,
    /// `Casco`, `Ongecorrigeerd` (uncorrected), `Gecorrigeerd` (corrected).
    pub report_status: Option<String>,
    /// The report's last change (`GewijzigdOp`).
    pub changed_at: Option<String>,
    /// No speeches yet (`report_status` `Casco`, or a report without a turn; in the text).
    #[serde(skip)]
    pub casco: bool,
    /// The activities (in the text; not in the structured content).
    #[serde(skip)]
    pub activities: Vec<ActivityShown>,
    /// Motions submitted in the activities shown.
    pub motions: Vec<MotionShown>,
    /// Votes taken in the activities shown (in the text; not in the structured content).
    #[serde(skip)]
    pub votes: Vec<VoteShown>,
    /// Where the page is.
    #[serde(flatten)]
    pub page: TextPage,
}

/// The time of day of a timestamp, HH:MM.
fn time(timestamp: Option<&str>) -> Option<&str> {
    timestamp.and_then(|t| t.get(11..16))
}

/// A status in words.
fn status_words(status: Option<&str>) -> &'static str {
    match status {
        Some("Ongecorrigeerd") => "uncorrected",
        Some("Gecorrigeerd") => "corrected",
        Some("Gerectificeerd") => "rectified",
        Some("Casco") => "casco: no speeches yet",
        _ => "status not given",
    }
}

/// Which speakers of `report` the filters match: `None` when no speaker or party is
/// asked (all).
fn matched(report: &Report, filters: &Filters) -> Option<Vec<bool>> {
    if filters.speaker.is_none() && filters.party.is_none() {
        return None;
    }
    let asked = filters.speaker.as_deref().map(words);
    let party = filters.party.as_deref().map(super::members::folded);
    Some(
        report
            .speakers
            .iter()
            .map(|s| {
                let by_name = asked.as_ref().is_none_or(|asked| {
                    let theirs: Vec<String> = [Some(&s.name), s.first_name.as_ref(), s.surname.as_ref()]
                        .into_iter()
                        .flatten()
                        .flat_map(|t| words(t))
                        .collect();
                    !asked.is_empty() && asked.iter().all(|w| theirs.contains(w))
                });
                let by_party = party.as_ref().is_none_or(|p| {
                    s.faction.as_deref().map(super::members::folded).is_some_and(|f| {
                        !p.trim().is_empty() && (f == *p || f.split(['-', ' ']).any(|part| part == p.as_str()))
                    })
                });
                by_name && by_party
            })
            .collect(),
    )
}

/// The activities `activity` selects (all when not given), by position; `Err` with the
/// message when it selects none.
pub fn selected(report: &Report, activity: Option<&str>) -> Result<Vec<usize>, String> {
    let Some(asked) = activity.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok((0..report.activities.len()).collect());
    };
    let by_number: Vec<usize> = report
        .activities
        .iter()
        .enumerate()
        .filter(|(_, a)| a.number.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(asked)))
        .map(|(i, _)| i)
        .collect();
    if !by_number.is_empty() {
        return Ok(by_number);
    }
    if let Ok(place) = asked.parse::<usize>()
        && (1..=report.activities.len()).contains(&place)
    {
        return Ok(vec![place - 1]);
    }
    Err(format!(
        "the report has no activity `{}`: give its number (e.g. {}) or its place, 1 to {}",
        crate::platforms::http::brief(asked),
        report
            .activities
            .iter()
            .find_map(|a| a.number.clone())
            .unwrap_or_else(|| "2025A04597".to_owned()),
        report.activities.len()
    ))
}

fn label(report: &Report, index: u32) -> String {
    report
        .speaker(index)
        .map_or_else(|| "(unnamed)".to_owned(), Speaker::label)
}

/// The transcript of the activities `chosen`, filtered by `keep` (speakers matched).
pub fn transcript(report: &Report, chosen: &[usize], keep: Option<&[bool]>) -> String {
    let matches = |i: u32| keep.is_none_or(|k| k.get(i as usize).copied().unwrap_or(false));
    let mut out = String::new();
    for &i in chosen {
        let Some(a) = report.activities.get(i) else { continue };
        let mut section = String::new();
        let mut last_kept = keep.is_none();
        let mut gap = false;
        for part in &a.parts {
            let shown = match part {
                Part::Turn(t) => {
                    let kept = matches(t.speaker)
                        || match t.role {
                            Role::Interruption { of } => matches(of) && !t.chair,
                            Role::Reply { to } => matches(to),
                            Role::Speech => false,
                        };
                    last_kept = kept;
                    kept.then(|| turn_text(report, t))
                }
                Part::Note { kind, text } => (keep.is_none() || last_kept).then(|| {
                    let head = kind.as_deref().map_or("[note]".to_owned(), |k| format!("[note: {k}]"));
                    format!("{head}\n{text}\n\n")
                }),
                Part::Heading { title } => {
                    let same = a.title.as_deref() == Some(title.as_str());
                    (keep.is_none() && !same).then(|| format!("### {title}\n\n"))
                }
                Part::Vote(v) => keep.is_none().then(|| {
                    let mut line = format!(
                        "[vote] {} ({})",
                        v.result.as_deref().unwrap_or("no result given"),
                        v.form.as_deref().unwrap_or("form not given")
                    );
                    for side in ["Voor", "Tegen"] {
                        let names: Vec<&str> = v
                            .votes
                            .iter()
                            .filter(|(_, s)| s == side)
                            .map(|(f, _)| f.as_str())
                            .collect();
                        if !names.is_empty() {
                            let _ = write!(line, "; {side}: {} ({})", names.join(", "), names.len());
                        }
                    }
                    line.push_str("\n\n");
                    line
                }),
            };
            match shown {
                Some(text) => {
                    if gap && !section.is_empty() {
                        section.push_str("[…]\n\n");
                    }
                    gap = false;
                    section.push_str(&text);
                }
                None => gap = true,
            }
        }
        if keep.is_some() && section.is_empty() {
            continue;
        }
        out.push_str(&activity_heading(a));
        out.push_str(&section);
    }
    out.trim_end().to_owned()
}

fn turn_text(report: &Report, t: &crate::platforms::tk::vlos::Turn) -> String {
    let who = label(report, t.speaker);
    let head = match (t.chair, t.role) {
        (true, _) => format!("[chair] {who}:"),
        (false, Role::Speech) => format!("[speech] {who}:"),
        (false, Role::Interruption { of }) => format!("[interruption] {who} → {}:", label(report, of)),
        (false, Role::Reply { to }) => format!("[reply] {who} → {}:", label(report, to)),
    };
    format!("{head}\n{}\n\n", t.text)
}

fn activity_heading(a: &Activity) -> String {
    let mut h = "## ".to_owned();
    if let Some(n) = &a.number {
        let _ = write!(h, "{n} ");
    }
    match (&a.kind, &a.title) {
        (Some(k), Some(t)) if k != t => {
            let _ = write!(h, "{k}: {t}");
        }
        (_, Some(t)) => h.push_str(t),
        (Some(k), None) => h.push_str(k),
        (None, None) => h.push_str("(untitled)"),
    }
    if a.continued {
        h.push_str(" (continued)");
    }
    if let (Some(from), Some(to)) = (time(a.starts_at.as_deref()), time(a.ends_at.as_deref())) {
        let _ = write!(h, " ({from}–{to})");
    }
    h.push_str("\n\n");
    h
}

/// The motions submitted in the activities `chosen`, with their case numbers.
fn motions(report: &Report, chosen: &[usize], cases: &CaseNumbers) -> Vec<MotionShown> {
    let mut out: Vec<MotionShown> = Vec::new();
    for &i in chosen {
        let a = &report.activities[i];
        for c in a.cases.iter().filter(|c| c.is_motion() && c.submitted) {
            let cited = match (c.dossier.as_deref(), c.number.as_deref()) {
                (Some(d), Some(n)) => DossierNumber::parse(d, n).map(|d| d.cited()),
                _ => None,
            };
            if out.iter().any(|m| m.cited.is_some() && m.cited == cited) {
                continue;
            }
            out.push(MotionShown {
                case_id: cited.as_ref().and_then(|c| cases.get(c).cloned()),
                cited,
                title: c.title.clone(),
            });
        }
    }
    out
}

/// The motions `chosen` activities submitted, as dossier and number (to look up their cases).
pub fn motions_asked(report: &Report, chosen: &[usize]) -> Vec<DossierNumber> {
    chosen
        .iter()
        .flat_map(|&i| report.activities[i].cases.iter())
        .filter(|c| c.is_motion() && c.submitted)
        .filter_map(|c| DossierNumber::parse(c.dossier.as_deref()?, c.number.as_deref()?))
        .collect()
}

fn votes(report: &Report, chosen: &[usize]) -> Vec<VoteShown> {
    let mut out = Vec::new();
    for &i in chosen {
        let mut subject = None;
        for part in &report.activities[i].parts {
            match part {
                Part::Heading { title } => subject = Some(title.clone()),
                Part::Vote(v) => {
                    let side = |s: &str| v.votes.iter().filter(|(_, x)| x == s).map(|(f, _)| f.clone()).collect();
                    out.push(VoteShown {
                        subject: subject.clone(),
                        result: v.result.clone(),
                        form: v.form.clone(),
                        voor: side("Voor"),
                        tegen: side("Tegen"),
                    });
                }
                _ => {}
            }
        }
    }
    out
}

fn activities(report: &Report) -> Vec<ActivityShown> {
    report
        .activities
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let turns = a.parts.iter().filter_map(|p| match p {
                Part::Turn(t) => Some(t),
                _ => None,
            });
            let (mut speeches, mut interruptions) = (0, 0);
            for t in turns.filter(|t| !t.chair) {
                match t.role {
                    Role::Interruption { .. } => interruptions += 1,
                    Role::Speech | Role::Reply { .. } => speeches += 1,
                }
            }
            ActivityShown {
                place: i + 1,
                number: a.number.clone(),
                kind: a.kind.clone(),
                title: a.title.clone(),
                speeches,
                interruptions,
            }
        })
        .collect()
}

/// One page of a report's transcript with its header, or the message when the filters
/// select nothing that exists (an unknown activity).
pub fn render(
    report: &Report,
    about: &About,
    filters: &Filters,
    cases: &CaseNumbers,
    served: Served,
    offset: usize,
    length: usize,
) -> Result<Rendered, String> {
    let chosen = selected(report, filters.activity.as_deref())?;
    let keep = matched(report, filters);
    let text = transcript(report, &chosen, keep.as_deref());
    let (page, at) = text_page(&text, offset, length);
    let listed = activities(report);
    let motions = motions(report, &chosen, cases);
    let votes = votes(report, &chosen);
    let organization = organization_of(&report.meeting);
    let kind = about.kind.clone().or_else(|| report.meeting.kind.clone());
    let mut t = header(report, about, kind.as_deref(), &organization, served);
    let casco = report.is_casco();
    if offset == 0 {
        write_activities(&mut t, &listed);
        if casco {
            write_agenda(&mut t, report, &chosen);
        }
        write_motions(&mut t, &motions);
        write_votes(&mut t, &votes);
    }
    write_selection(&mut t, report, filters, keep.as_deref());
    if text.is_empty() {
        t.push_str(if casco {
            "\nNo transcript yet."
        } else {
            "\nNothing in the transcript is shown for this selection."
        });
    } else {
        let _ = write!(t, "\nTranscript, {}.\n\n{page}", at.note());
    }
    let shown = DebateShown {
        id: about.id.clone(),
        title: about.title.clone(),
        date: about.date.clone(),
        kind,
        organization,
        url: about.url.clone(),
        platform: "tk".to_owned(),
        report_id: about.report_id.clone(),
        report_status: report.status.clone(),
        changed_at: about.changed_at.clone(),
        casco,
        activities: listed.into_iter().take(MAX_LISTED).collect(),
        motions: motions.into_iter().take(MAX_LISTED).collect(),
        votes: votes.into_iter().take(MAX_LISTED).collect(),
        page: at,
    };
    Ok(Rendered {
        text: t,
        structured: Structure::Own(json!(shown)),
    })
}

/// The meeting's leading committee, else its first, else the Kamer.
fn organization_of(m: &Meeting) -> String {
    m.committees
        .iter()
        .find(|c| c.role.as_deref() == Some("Voortouwcommissie"))
        .or(m.committees.first())
        .and_then(|c| c.name.clone())
        .unwrap_or_else(|| "Tweede Kamer".to_owned())
}

/// The first lines: the meeting, the report, and whether either is unfinished.
fn header(report: &Report, about: &About, kind: Option<&str>, organization: &str, served: Served) -> String {
    let m = &report.meeting;
    let mut t = format!(
        "Tweede Kamer meeting {} — {} ({}{}{}{}){}.\nReport {}: {}, {}{}{}.",
        about.id,
        about.title,
        kind.unwrap_or("kind not given"),
        about.date.as_deref().map(|d| format!(", {d}")).unwrap_or_default(),
        m.room.as_deref().map(|r| format!(", {r}")).unwrap_or_default(),
        if organization == "Tweede Kamer" {
            String::new()
        } else {
            format!(", {organization}")
        },
        provenance(served),
        about.report_id,
        report.kind.as_deref().unwrap_or("kind not given"),
        status_words(report.status.as_deref()),
        report
            .version
            .as_deref()
            .map(|v| format!(", format {v}"))
            .unwrap_or_default(),
        about
            .changed_at
            .as_deref()
            .map(|c| format!(", changed {c}"))
            .unwrap_or_default(),
    );
    if m.unfinished {
        t.push_str(" The meeting was not closed when this report was made: later parts may follow.");
    }
    if report.is_casco() {
        t.push_str(
            "\nThis is a casco report: the meeting's activities, agenda and speakers are known, but no speeches are \
             written yet (the Kamer publishes them within hours to days; ask again later).",
        );
    }
    t
}

/// The report's activities, each a line with its speeches and interruptions.
fn write_activities(t: &mut String, listed: &[ActivityShown]) {
    t.push_str("\nActivities:");
    for a in listed {
        let _ = write!(
            t,
            "\n{}. {}{}{}",
            a.place,
            a.number.as_deref().map(|n| format!("{n} ")).unwrap_or_default(),
            match (&a.kind, &a.title) {
                (Some(k), Some(ti)) if k != ti => format!("{k}: {ti}"),
                (_, Some(ti)) => ti.clone(),
                (Some(k), None) => k.clone(),
                (None, None) => "(untitled)".to_owned(),
            },
            if a.speeches + a.interruptions > 0 {
                format!(
                    " — {} speech{}, {} interruption{}",
                    a.speeches,
                    if a.speeches == 1 { "" } else { "es" },
                    a.interruptions,
                    if a.interruptions == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        );
    }
}

/// What a casco report already knows of the `chosen` activities: the speakers listed and
/// the cases on the agenda.
fn write_agenda(t: &mut String, report: &Report, chosen: &[usize]) {
    let listed_speakers: Vec<String> = chosen
        .iter()
        .flat_map(|&i| report.activities[i].listed_speakers.iter())
        .filter_map(|s| report.speaker(*s).map(Speaker::label))
        .collect();
    if !listed_speakers.is_empty() {
        let _ = write!(t, "\nSpeakers listed: {}.", listed_speakers.join(", "));
    }
    let cases: Vec<String> = chosen
        .iter()
        .flat_map(|&i| report.activities[i].cases.iter())
        .take(MAX_HEADER_LINES)
        .filter_map(|c| c.title.clone())
        .collect();
    let all = chosen.iter().map(|&i| report.activities[i].cases.len()).sum::<usize>();
    if !cases.is_empty() {
        let _ = write!(t, "\nOn the agenda ({all} cases): {}", cases.join("; "));
        if all > cases.len() {
            let _ = write!(t, "; and {} more.", all - cases.len());
        }
    }
}

/// The motions submitted, the first [`MAX_HEADER_LINES`] each a line with its case.
fn write_motions(t: &mut String, motions: &[MotionShown]) {
    if motions.is_empty() {
        return;
    }
    let _ = write!(t, "\nMotions submitted ({}):", motions.len());
    for mo in motions.iter().take(MAX_HEADER_LINES) {
        let _ = write!(
            t,
            "\n- {}{}{}",
            mo.cited.as_deref().map(|c| format!("{c} ")).unwrap_or_default(),
            mo.title.as_deref().unwrap_or("(no title)"),
            match &mo.case_id {
                Some(id) => format!(" — case {id} (its votes: tk_votes)"),
                None => " — no case found at the platform".to_owned(),
            }
        );
    }
    if motions.len() > MAX_HEADER_LINES {
        let _ = write!(
            t,
            "\n… and {} more (structured content `motions`).",
            motions.len() - MAX_HEADER_LINES
        );
    }
}

/// The votes taken, the first [`MAX_HEADER_LINES`] each a line.
fn write_votes(t: &mut String, votes: &[VoteShown]) {
    for v in votes.iter().take(MAX_HEADER_LINES) {
        let _ = write!(
            t,
            "\nVote: {} — {} ({}); Voor {}, Tegen {}.",
            v.subject.as_deref().unwrap_or("(no subject)"),
            v.result.as_deref().unwrap_or("no result given"),
            v.form.as_deref().unwrap_or("form not given"),
            v.voor.len(),
            v.tegen.len()
        );
    }
}

/// What the filters asked, and which speakers they matched (`keep`: per speaker of the
/// report, whether it matched), or how to widen when none did.
fn write_selection(t: &mut String, report: &Report, filters: &Filters, keep: Option<&[bool]>) {
    let mut asked = Vec::new();
    if let Some(s) = &filters.speaker {
        asked.push(format!("speaker `{s}`"));
    }
    if let Some(p) = &filters.party {
        asked.push(format!("party `{p}`"));
    }
    if let Some(a) = &filters.activity {
        asked.push(format!("activity `{a}`"));
    }
    if asked.is_empty() {
        return;
    }
    let _ = write!(t, "\nShown: {}", asked.join(", "));
    let Some(keep) = keep else {
        t.push('.');
        return;
    };
    let matched_speakers = report
        .speakers
        .iter()
        .zip(keep)
        .filter(|(_, m)| **m)
        .map(|(s, _)| s.label())
        .fold(Vec::new(), |mut v, l| {
            if !v.contains(&l) {
                v.push(l);
            }
            v
        });
    if matched_speakers.is_empty() {
        let speakers: Vec<String> = report.speakers.iter().map(Speaker::label).take(30).collect();
        let _ = write!(
            t,
            " — no speaker of this report matches. To widen: another spelling or only the surname, or \
             no `speaker`/`party`; its speakers: {}.",
            speakers.join(", ")
        );
    } else {
        let _ = write!(t, " — matched {}.", matched_speakers.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::leading_day;
    use crate::platforms::tk::vlos::read_report;

    fn corpus(name: &str) -> Report {
        let bytes = besluitbron_fakes::corpus::read(&format!("tk/vlos/{name}")).unwrap_or_else(|e| panic!("{e}"));
        read_report(&bytes).unwrap()
    }

    fn about(r: &Report) -> About {
        About {
            id: "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311".into(),
            title: r.meeting.title.clone().unwrap_or_default(),
            date: r.meeting.date.as_deref().and_then(leading_day).map(str::to_owned),
            kind: r.meeting.kind.clone(),
            report_id: "fb28c35e-af8d-49ee-8905-ad41eb41e4de".into(),
            ..About::default()
        }
    }

    #[test]
    fn a_committee_debate_reads_with_interruptions_attributed_to_the_interrupter() {
        let r = corpus("fb28c35e-af8d-49ee-8905-ad41eb41e4de.xml");
        let rendered = render(
            &r,
            &about(&r),
            &Filters::default(),
            &CaseNumbers::new(),
            Served::Fetched,
            0,
            100_000,
        )
        .unwrap();
        let text = &rendered.text;
        assert!(
            text.contains("MIVD (Commissie, 2025-07-02, Klompezaal, vaste commissie voor Defensie)"),
            "{}",
            &text[..400]
        );
        assert!(
            text.contains("[speech] Nordkamp (GroenLinks-PvdA):\nDank, voorzitter."),
            "{}",
            &text[..3000]
        );
        assert!(text.contains("[chair] Kahraman (NSC):\nDank aan de heer Nordkamp voor zijn inbreng."));
        assert!(text.contains("[interruption] Olger van Dijk (NSC) → Pool (PVV):\nIk zat even te aarzelen"));
        assert!(text.contains("[reply] Pool (PVV) → Olger van Dijk (NSC):\nHeel concreet"));
        assert!(text.contains("[speech] Brekelmans (minister van Defensie):\nDank, voorzitter."));
        assert!(!text.contains("De heer Pool (PVV):"), "labels are left out");
    }

    #[test]
    fn a_speaker_filter_keeps_their_turns_and_the_exchanges_they_are_in() {
        let r = corpus("fb28c35e-af8d-49ee-8905-ad41eb41e4de.xml");
        let filters = Filters {
            speaker: Some("olger van dijk".into()),
            ..Filters::default()
        };
        let rendered = render(
            &r,
            &about(&r),
            &filters,
            &CaseNumbers::new(),
            Served::Cached,
            0,
            100_000,
        )
        .unwrap();
        let text = &rendered.text;
        assert!(text.contains("matched Olger van Dijk (NSC)"), "{}", &text[..1500]);
        assert!(text.contains("[interruption] Olger van Dijk (NSC) → Pool (PVV):"));
        assert!(text.contains("[reply] Pool (PVV) → Olger van Dijk (NSC):"));
        assert!(!text.contains("[speech] Nordkamp"), "another's speech is left out");
        assert!(!text.contains("[chair]"), "the chair is left out");
        let none = Filters {
            speaker: Some("Nobody".into()),
            ..Filters::default()
        };
        let rendered = render(&r, &about(&r), &none, &CaseNumbers::new(), Served::Cached, 0, 100).unwrap();
        assert!(
            rendered.text.contains("no speaker of this report matches"),
            "{}",
            rendered.text
        );
        let party = Filters {
            party: Some("pvv".into()),
            ..Filters::default()
        };
        let rendered = render(&r, &about(&r), &party, &CaseNumbers::new(), Served::Cached, 0, 100_000).unwrap();
        assert!(rendered.text.contains("matched Pool (PVV).") && rendered.text.contains("[speech] Pool (PVV):"));
    }

    #[test]
    fn motions_carry_their_case_numbers_and_an_unknown_activity_is_refused() {
        let r = corpus("66ab0b76-d942-425b-9c34-30e39f7946a7.xml");
        let mut cases = CaseNumbers::new();
        cases.insert("36760-3".into(), "2025Z11111".into());
        let filters = Filters {
            activity: Some("2025A04597".into()),
            ..Filters::default()
        };
        let rendered = render(&r, &about(&r), &filters, &cases, Served::Fetched, 0, 2_000).unwrap();
        assert!(
            rendered.text.contains("- 36760-3 de motie-Timmermans"),
            "{}",
            rendered.text
        );
        assert!(rendered.text.contains("case 2025Z11111 (its votes: tk_votes)"));
        let Structure::Own(v) = &rendered.structured else {
            panic!()
        };
        assert_eq!(v["motions"][0]["case_id"], "2025Z11111");
        assert!(selected(&r, Some("2099A00001")).unwrap_err().contains("no activity"));
        assert_eq!(selected(&r, Some("3")).unwrap(), vec![2]);
    }

    #[test]
    fn a_casco_report_says_so_and_lists_what_it_knows() {
        let r = corpus("b5130467-a6c2-4f83-99c3-65ec778e5a24.xml");
        let rendered = render(
            &r,
            &about(&r),
            &Filters::default(),
            &CaseNumbers::new(),
            Served::Fetched,
            0,
            8_000,
        )
        .unwrap();
        assert!(rendered.text.contains("This is a casco report"), "{}", rendered.text);
        assert!(rendered.text.contains("On the agenda ("), "{}", rendered.text);
        let Structure::Own(v) = &rendered.structured else {
            panic!()
        };
        assert_eq!(v["report_status"], "Casco");
    }
}
