//! `tk_votes`: how the Tweede Kamer voted on a motion, amendment or bill — by its case
//! number, or on the cases found by words in their title or subject.
//!
//! Each request is its own platform call through the one path, admitted and counted as
//! it is asked for (R-L8), one unit each: the cases with their decisions
//! (`Zaak?$expand=Besluit`), then the votes cast on the decisions that were put to the
//! vote (`Stemming?$filter=Besluit_Id eq …`), page after page as the platform links them
//! (at most [`MAX_VOTE_PAGES`]).
//! One result per decision, so a case voted twice (a re-vote, an amended motion) gives
//! two: the decision (`BesluitSoort`, `BesluitTekst`), how it was voted (show of hands or
//! roll call), per faction `Voor`/`Tegen`/`Niet deelgenomen` with its seats, the totals,
//! each member's vote in a roll call, and a vote cast by mistake (`Vergissing`) flagged —
//! the Kamer counts it as cast, and so does the tally.
//!
//! What is kept, each request's answer on its own: when every voted decision it concerns
//! is final (`Status` `Besluit`), as a reference answer (a month); else ten minutes, so a
//! later vote is seen.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Keep, Served};
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::{Call, Context, PlatformCall, Rendered, Reply, Structure, provenance, tool_error};
use crate::connectors::tool::ToolSpec;
use crate::platforms::tk::{
    Besluit, CasesWithDecisions, MAX_VOTE_PAGES, MAX_VOTED_DECISIONS, MAX_WORDS, Stemming, TkClient, TkSearch, Zaak,
    ZaakBesluiten, is_case_number,
};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// An answer with a decision not yet final is kept this long.
const OPEN_TTL_MS: u64 = 10 * 60 * 1000;
/// Cases shown by default, and at most.
const DEFAULT_CASES: usize = 3;
const MAX_CASES: usize = 10;
/// The decision status the Kamer gives a final decision.
const FINAL_STATUS: &str = "Besluit";

/// Arguments of `tk_votes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VotesArgs {
    /// A case number such as `2025Z17647`. Give `id` or `query`.
    #[schemars(length(max = 16))]
    #[serde(default)]
    pub id: Option<String>,
    /// Words that must all occur in the case's title or subject (at most 10), e.g.
    /// `vuurwerk`.
    #[schemars(length(max = 500))]
    #[serde(default)]
    pub query: Option<String>,
    /// With `query`: started from this day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// With `query`: started until this day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// With `query`: voted cases to show (default 3).
    #[schemars(schema_with = "limit_schema")]
    #[serde(default)]
    pub limit: Option<u32>,
    /// With `query`: from the answer's `next_offset`.
    #[schemars(schema_with = "offset_schema")]
    #[serde(default)]
    pub offset: Option<u32>,
}

/// A plain integer 1–10 (no `format`, no `null` in the type: portable to every client).
fn limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_CASES})
}

/// A plain integer from 0.
fn offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0, "maximum": 250})
}

/// What was asked: one case, or words.
#[derive(Clone, Debug)]
enum Asked {
    Case(String),
    Words {
        search: TkSearch,
        offset: usize,
        limit: usize,
    },
}

/// The votes on one decision, as kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionVotes {
    /// The decision.
    pub decision: Besluit,
    /// The votes cast on it (not deleted), as the platform lists them.
    pub votes: Vec<Stemming>,
}

/// A case with its voted decisions, as kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseVotes {
    /// The case.
    pub case: Zaak,
    /// Its record at the platform.
    pub url: Option<String>,
    /// Its decisions that were put to the vote, in their order.
    pub decisions: Vec<DecisionVotes>,
    /// Its other decisions (not votes), by kind.
    pub other_decisions: Vec<String>,
}

/// What `tk_votes` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VotesAnswer {
    /// The cases shown.
    pub cases: Vec<CaseVotes>,
    /// Cases the platform found (its count).
    pub matched: Option<u64>,
    /// Cases found that were put to the vote (within the platform's first page).
    pub voted: usize,
    /// The first voted case shown.
    pub offset: usize,
    /// The platform found more cases than its first page, which alone was read.
    pub more: bool,
}

fn is_final(decision: &Besluit) -> bool {
    decision.status.as_deref() == Some(FINAL_STATUS) && outcome(decision) != Some(Outcome::HeldOver)
}

/// Whether a decision was (or is to be) put to the vote.
fn is_vote(decision: &Besluit) -> bool {
    decision
        .stemmings_soort
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
        || decision
            .besluit_soort
            .as_deref()
            .is_some_and(|s| s.trim_start().starts_with("Stemmen"))
}

/// `adopted`, `rejected` or `held over`, from the decision's words.
fn outcome(decision: &Besluit) -> Option<Outcome> {
    let words = format!(
        "{} {}",
        decision.besluit_soort.as_deref().unwrap_or(""),
        decision.besluit_tekst.as_deref().unwrap_or("")
    )
    .to_lowercase();
    if words.contains("aangenomen") {
        Some(Outcome::Adopted)
    } else if words.contains("verworpen") {
        Some(Outcome::Rejected)
    } else if words.contains("aangehouden") {
        Some(Outcome::HeldOver)
    } else {
        None
    }
}

/// A case's voted decisions and the ids of the others' kinds.
fn split_decisions(case: &ZaakBesluiten) -> (Vec<Besluit>, Vec<String>) {
    let mut voted: Vec<Besluit> = Vec::new();
    let mut other = Vec::new();
    for d in case.besluiten.iter().filter(|d| !d.verwijderd) {
        if is_vote(d) {
            voted.push(d.clone());
        } else {
            other.push(d.besluit_soort.clone().unwrap_or_else(|| "(no kind)".to_owned()));
        }
    }
    voted.sort_by(|a, b| {
        (a.agendapunt_zaak_besluit_volgorde, &a.gewijzigd_op)
            .cmp(&(b.agendapunt_zaak_besluit_volgorde, &b.gewijzigd_op))
    });
    (voted, other)
}

/// What one page of votes keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VotesPage {
    /// The votes of the page (not deleted).
    pub votes: Vec<Stemming>,
    /// The platform's link to the next page.
    pub next: Option<String>,
}

/// How long an answer about `decisions` is kept: a month when all are final, else briefly.
fn keep_for<'a>(mut decisions: impl Iterator<Item = &'a Besluit>) -> Keep {
    if decisions.all(is_final) {
        Keep::Normal
    } else {
        Keep::Briefly { ttl_ms: OPEN_TTL_MS }
    }
}

/// How a whole answer of several calls was served: the least settled of its parts.
fn served_of(parts: &[Served]) -> Served {
    [Served::Stale, Served::Fetched, Served::Coalesced]
        .into_iter()
        .find(|s| parts.contains(s))
        .unwrap_or(Served::Cached)
}

/// Asks the platform, one admitted call per request: the cases, then each page of the
/// votes on their voted decisions; the answer and how it was served.
async fn fetch(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    key: CacheKey,
    asked: &Arc<Asked>,
) -> Result<(VotesAnswer, Served), crate::call::AnswerError> {
    let cases_call = {
        let (client, asked) = (Arc::clone(client), Arc::clone(asked));
        PlatformCall::new(key, Units::ONE, move || {
            let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
            async move {
                let found = match &*asked {
                    Asked::Case(number) => client.case_with_decisions(number).await?,
                    Asked::Words { search, .. } => client.search_cases_with_decisions(search).await?,
                };
                let keep = keep_for(
                    found
                        .cases
                        .iter()
                        .flat_map(|c| c.besluiten.iter().filter(|d| !d.verwijderd && is_vote(d))),
                );
                Ok((
                    found,
                    Feedback {
                        keep,
                        ..Feedback::default()
                    },
                ))
            }
        })
    };
    let (found, served) = ctx.fetch(crate::call::Who::Caller, call, cases_call).await?;
    let mut servings = vec![served];
    let found: &CasesWithDecisions = &found;
    let (offset, limit) = match &**asked {
        Asked::Case(_) => (0, MAX_CASES),
        Asked::Words { offset, limit, .. } => (*offset, *limit),
    };
    let voted: Vec<&ZaakBesluiten> = found
        .cases
        .iter()
        .filter(|c| !c.zaak.verwijderd && c.besluiten.iter().any(|d| !d.verwijderd && is_vote(d)))
        .collect();
    // A case asked by number is shown even when it was never voted on (its decisions say why).
    let chosen: Vec<&ZaakBesluiten> = match &**asked {
        Asked::Case(_) => found.cases.iter().filter(|c| !c.zaak.verwijderd).take(1).collect(),
        Asked::Words { .. } => voted.iter().skip(offset).take(limit).copied().collect(),
    };
    let mut cases = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for case in chosen {
        let (decisions, other) = split_decisions(case);
        if !ids.is_empty() && ids.len() + decisions.len() > MAX_VOTED_DECISIONS {
            break;
        }
        ids.extend(decisions.iter().map(|d| d.id.to_ascii_lowercase()));
        cases.push((case, decisions, other));
    }
    ids.truncate(MAX_VOTED_DECISIONS);
    let mut votes = Vec::new();
    if !ids.is_empty() {
        let keep = keep_for(cases.iter().flat_map(|(_, decisions, _)| decisions.iter()));
        let platform_error = |e| crate::call::AnswerError::Call(crate::driver::CallError::Platform(e));
        let mut url = Some(client.votes_url(&ids).map_err(platform_error)?.to_string());
        let mut page = 0;
        while let Some(at) = url.take() {
            if page == MAX_VOTE_PAGES {
                return Err(platform_error(crate::platforms::http::PlatformError::TooManyPages {
                    platform: PLATFORM,
                    pages: MAX_VOTE_PAGES,
                }));
            }
            // Each page its own call: admitted and counted as it is asked for.
            let key = CacheKey::new(PLATFORM, DataClass::Reference, "votes_page")
                .param("decisions", ids.join(","))
                .param("page", page.to_string());
            let page_call = {
                let client = Arc::clone(client);
                let at: Arc<str> = Arc::from(at.as_str());
                PlatformCall::new(key, Units::ONE, move || {
                    let (client, at) = (Arc::clone(&client), Arc::clone(&at));
                    async move {
                        let (votes, next) = client.votes_page(&at).await?;
                        Ok((
                            VotesPage { votes, next },
                            Feedback {
                                keep,
                                ..Feedback::default()
                            },
                        ))
                    }
                })
            };
            let (got, served) = ctx.fetch(crate::call::Who::Caller, call, page_call).await?;
            servings.push(served);
            votes.extend(got.votes.iter().cloned());
            url = got.next.clone();
            page += 1;
        }
    }
    let mut by_decision: BTreeMap<String, Vec<Stemming>> = BTreeMap::new();
    for v in votes {
        let key = v.besluit_id.clone().unwrap_or_default().to_ascii_lowercase();
        by_decision.entry(key).or_default().push(v);
    }
    let cases = cases
        .into_iter()
        .map(|(case, decisions, other)| CaseVotes {
            url: client.case_url(&case.zaak.id.to_ascii_lowercase()),
            case: case.zaak.clone(),
            decisions: decisions
                .into_iter()
                .map(|d| DecisionVotes {
                    votes: by_decision.remove(&d.id.to_ascii_lowercase()).unwrap_or_default(),
                    decision: d,
                })
                .collect(),
            other_decisions: other,
        })
        .collect();
    let answer = VotesAnswer {
        cases,
        matched: found.count,
        voted: voted.len(),
        offset,
        more: found.more,
    };
    Ok((answer, served_of(&servings)))
}

/// The tool.
pub(super) const TOOL: ToolSpec = crate::tool! {
    name: "tk_votes",
    title: "Tweede Kamer votes",
    description: "How the Tweede Kamer voted on a motion, amendment or bill, by case number (`id`) or `query` words: \
                  per decision (a re-vote gives two) adopted or rejected, show of hands or roll call, per faction \
                  Voor/Tegen/Niet deelgenomen with seats, totals, each member's vote in a roll call, a vote cast by \
                  mistake (`Vergissing`) flagged. Final decisions: a month in the buffer.",
    arguments: VotesArgs,
    output: VotesShown,
    run: tk_votes,
};

/// The votes on a case, or on the cases found by words.
pub(super) async fn tk_votes(ctx: &Context, call: &Call, args: VotesArgs) -> Reply {
    let id = args.id.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let query = args.query.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let asked = match (id, query) {
        (Some(_), Some(_)) | (None, None) => {
            return tool_error(
                "tk_votes: give either `id` (a case number such as 2025Z17647) or `query` (words in the case's \
                 title or subject), not both and not neither",
            )
            .into();
        }
        (Some(id), None) => {
            let number = id.to_ascii_uppercase();
            if !is_case_number(&number) {
                return tool_error(format!(
                    "tk_votes: `{}` is not a case number (four digits, Z, five or six digits, e.g. 2025Z17647; \
                     tk_search with kind `cases` finds them); for words use `query`",
                    crate::platforms::http::brief(id)
                ))
                .into();
            }
            if args.date_from.is_some() || args.date_to.is_some() || args.limit.is_some() || args.offset.is_some() {
                return tool_error("tk_votes: `date_from`, `date_to`, `limit` and `offset` go with `query`, not `id`")
                    .into();
            }
            Asked::Case(number)
        }
        (None, Some(query)) => {
            let words: Vec<String> = query.split_whitespace().map(str::to_owned).collect();
            if words.len() > MAX_WORDS {
                return tool_error(format!(
                    "tk_votes: `query` must hold 1 to {MAX_WORDS} words, not {}",
                    words.len()
                ))
                .into();
            }
            let limit = match super::super::pages::list_limit("tk_votes", args.limit, DEFAULT_CASES, MAX_CASES) {
                Ok(limit) => limit,
                Err(message) => return tool_error(message).into(),
            };
            let mut search = TkSearch::words(words);
            search.date_from = args.date_from.clone();
            search.date_to = args.date_to.clone();
            if let Err(e) = search.filter("GestartOp") {
                return tool_error(e).into();
            }
            Asked::Words {
                search,
                offset: args.offset.unwrap_or(0) as usize,
                limit,
            }
        }
    };
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let key = match &asked {
        Asked::Case(number) => CacheKey::new(PLATFORM, DataClass::Reference, "votes").param("case", number.clone()),
        Asked::Words { search, offset, limit } => {
            let mut key = CacheKey::new(PLATFORM, DataClass::Search, "votes_search")
                .param("words", search.words.join(" "))
                .param("offset", offset.to_string())
                .param("limit", limit.to_string());
            for (name, value) in [("date_from", &search.date_from), ("date_to", &search.date_to)] {
                if let Some(v) = value {
                    key = key.param(name, v.clone());
                }
            }
            key
        }
    };
    let searched = describe(&asked);
    let asked = Arc::new(asked);
    match fetch(ctx, call, &client, key, &asked).await {
        Ok((answer, served)) => render(&answer, served, &searched).into_own_result().into(),
        Err(e) => e.into(),
    }
}

/// What was asked, in words.
fn describe(asked: &Asked) -> String {
    match asked {
        Asked::Case(number) => format!("case {number}"),
        Asked::Words { search, .. } => {
            let mut s = format!("cases whose title or subject holds `{}`", search.words.join(" "));
            match (&search.date_from, &search.date_to) {
                (Some(f), Some(t)) => write!(s, ", started {f} to {t}"),
                (Some(f), None) => write!(s, ", started from {f}"),
                (None, Some(t)) => write!(s, ", started until {t}"),
                (None, None) => Ok(()),
            }
            .ok();
            s
        }
    }
}

/// Votes counted for `Voor`, `Tegen` and `Niet deelgenomen`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// For.
    pub voor: i64,
    /// Against.
    pub tegen: i64,
    /// Did not take part.
    pub niet_deelgenomen: i64,
}

impl Tally {
    fn add(&mut self, vote: Vote, n: i64) {
        match vote {
            Vote::For => self.voor += n,
            Vote::Against => self.tegen += n,
            Vote::NotTakingPart | Vote::Split => self.niet_deelgenomen += n,
        }
    }

    /// The one way all voted, or split.
    fn line(&self) -> Vote {
        match (self.voor > 0, self.tegen > 0) {
            (true, false) => Vote::For,
            (false, true) => Vote::Against,
            (true, true) => Vote::Split,
            (false, false) => Vote::NotTakingPart,
        }
    }
}

/// How a member or a faction voted, written as the Kamer writes it (`Stemming.Soort`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum Vote {
    /// `Voor`: for.
    #[serde(rename = "Voor")]
    For,
    /// `Tegen`: against.
    #[serde(rename = "Tegen")]
    Against,
    /// `Niet deelgenomen`: did not take part.
    #[serde(rename = "Niet deelgenomen")]
    NotTakingPart,
    /// `verdeeld`: a faction whose members voted both ways (never a member's vote).
    #[serde(rename = "verdeeld")]
    Split,
}

impl Vote {
    /// The platform's `Soort`: `Voor` and `Tegen` count for and against; anything else did
    /// not (the Kamer writes `Niet deelgenomen`).
    fn of_soort(soort: Option<&str>) -> Vote {
        match soort {
            Some("Voor") => Vote::For,
            Some("Tegen") => Vote::Against,
            _ => Vote::NotTakingPart,
        }
    }

    /// As the Kamer writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Vote::For => "Voor",
            Vote::Against => "Tegen",
            Vote::NotTakingPart => "Niet deelgenomen",
            Vote::Split => "verdeeld",
        }
    }
}

impl std::fmt::Display for Vote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a decision came to, when its words say (`BesluitSoort`, `BesluitTekst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Outcome {
    /// `aangenomen`.
    #[serde(rename = "adopted")]
    Adopted,
    /// `verworpen`.
    #[serde(rename = "rejected")]
    Rejected,
    /// `aangehouden`: not voted yet.
    #[serde(rename = "held over")]
    HeldOver,
}

/// A faction's vote on one decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FactionVote {
    /// The faction, as the Kamer names it in the vote (`ActorFractie`).
    pub faction: String,
    /// Its seats at the vote (`FractieGrootte`).
    pub seats: Option<i64>,
    /// `Voor`, `Tegen`, `Niet deelgenomen`, or `verdeeld` when its members voted both ways.
    // The schema says string: tools/list has no room for the values (the description names them).
    #[schemars(with = "String")]
    pub vote: Vote,
    /// Its votes counted: its seats in a show of hands, its members in a roll call.
    pub tally: Tally,
    /// Its vote (or a member's) was cast by mistake (`Vergissing`); it counts as cast.
    pub mistake: bool,
}

/// The members of one faction who voted alike in a roll call: every member's vote, each
/// faction and vote written once (150 members named one by one were 10 KB a roll call,
/// and a bill's or a query's answer holds several).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemberVote {
    /// The faction.
    pub faction: String,
    /// `Voor`, `Tegen` or `Niet deelgenomen`.
    #[schemars(with = "String")]
    pub vote: Vote,
    /// Cast by mistake (`Vergissing`); it counts as cast.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mistake: bool,
    /// The members (`ActorNaam`), in the platform's order.
    pub names: Vec<String>,
}

/// One decision's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VoteResult {
    /// The case number, e.g. `2025Z17647` (`tk_votes` `id`).
    pub id: String,
    /// The case's subject.
    pub title: String,
    /// The day the case started, YYYY-MM-DD.
    pub date: Option<String>,
    /// The case's kind, e.g. `Motie`, `Amendement`, `Wetgeving`.
    pub kind: Option<String>,
    /// `Tweede Kamer`.
    pub organization: String,
    /// The case's record at the platform.
    pub url: Option<String>,
    /// `tk`.
    pub platform: String,
    /// `tk_votes`, which reads it by `id`.
    pub tool: String,
    /// The decision's id (a GUID).
    pub decision_id: String,
    /// Its place among the case's voted decisions (1-based) and how many there are.
    pub decision_number: usize,
    /// How many voted decisions the case has.
    pub decisions: usize,
    /// `BesluitSoort`, e.g. `Stemmen - aangenomen`.
    pub decision: Option<String>,
    /// `BesluitTekst`, e.g. `Aangenomen.`
    pub decision_text: Option<String>,
    /// `adopted`, `rejected`, `held over`, when the decision says.
    #[schemars(with = "Option<String>")]
    pub outcome: Option<Outcome>,
    /// `StemmingsSoort`: `Met handopsteken` (show of hands) or `Hoofdelijk` (roll call).
    pub vote_kind: Option<String>,
    /// A roll call: members voted one by one (see `members`).
    pub roll_call: bool,
    /// The decision is final (`Status` `Besluit`).
    pub is_final: bool,
    /// The totals: seats in a show of hands, members in a roll call.
    pub totals: Tally,
    /// Per faction, largest first.
    pub factions: Vec<FactionVote>,
    /// Every member's vote, in a roll call (empty otherwise): per faction (in the order
    /// of `factions`) and vote, the members' names.
    pub members: Vec<MemberVote>,
}

/// `tk_votes`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VotesShown {
    /// What was asked, in words.
    pub searched: String,
    /// One result per voted decision.
    pub results: Vec<VoteResult>,
    /// Voted cases found (exact unless the platform had more matching cases than its
    /// first page), and the `offset` for the voted cases that follow.
    #[serde(flatten)]
    pub tally: crate::connectors::vocabulary::Tally,
}

/// One decision's result from its kept votes.
fn result_of(case: &CaseVotes, n: usize, d: &DecisionVotes) -> VoteResult {
    let roll_call = d.decision.stemmings_soort.as_deref() == Some("Hoofdelijk") || d.votes.iter().any(is_member);
    let mut totals = Tally::default();
    let mut factions: BTreeMap<String, FactionVote> = BTreeMap::new();
    let mut members = Vec::new();
    for v in &d.votes {
        let vote = Vote::of_soort(v.soort.as_deref());
        let faction = v
            .actor_fractie
            .clone()
            .or_else(|| v.actor_naam.clone())
            .unwrap_or_default();
        let entry = factions.entry(faction.clone()).or_insert_with(|| FactionVote {
            faction: faction.clone(),
            seats: v.fractie_grootte,
            vote: Vote::NotTakingPart,
            tally: Tally::default(),
            mistake: false,
        });
        entry.mistake |= v.vergissing;
        let weight = if is_member(v) {
            1
        } else {
            v.fractie_grootte.unwrap_or(0).max(0)
        };
        entry.tally.add(vote, weight);
        totals.add(vote, weight);
        if is_member(v) {
            let name = v.actor_naam.clone().unwrap_or_default();
            let alike = members
                .iter_mut()
                .find(|m: &&mut MemberVote| m.faction == faction && m.vote == vote && m.mistake == v.vergissing);
            match alike {
                Some(group) => group.names.push(name),
                None => members.push(MemberVote {
                    faction,
                    vote,
                    mistake: v.vergissing,
                    names: vec![name],
                }),
            }
        }
    }
    let mut factions: Vec<FactionVote> = factions
        .into_values()
        .map(|mut f| {
            f.vote = f.tally.line();
            f
        })
        .collect();
    factions.sort_by(|a, b| b.seats.cmp(&a.seats).then_with(|| a.faction.cmp(&b.faction)));
    let place = |faction: &str| factions.iter().position(|f| f.faction == faction);
    members.sort_by_key(|m| (place(&m.faction), m.vote, m.mistake));
    let c = &case.case;
    VoteResult {
        id: c.nummer.clone().unwrap_or_default(),
        title: c.onderwerp.clone().or_else(|| c.titel.clone()).unwrap_or_default(),
        date: c.gestart_op.as_deref().and_then(|d| d.get(..10)).map(str::to_owned),
        kind: c.soort.clone(),
        organization: "Tweede Kamer".to_owned(),
        url: case.url.clone(),
        platform: "tk".to_owned(),
        tool: "tk_votes".to_owned(),
        decision_id: d.decision.id.clone(),
        decision_number: n,
        decisions: case.decisions.len(),
        decision: d.decision.besluit_soort.clone(),
        decision_text: d.decision.besluit_tekst.clone(),
        outcome: outcome(&d.decision),
        vote_kind: d.decision.stemmings_soort.clone(),
        roll_call,
        is_final: is_final(&d.decision),
        totals,
        factions,
        members,
    }
}

fn is_member(v: &Stemming) -> bool {
    v.persoon_id.as_deref().is_some_and(|p| !p.is_empty())
}

/// `tk_votes`'s result: per case, each voted decision with its tally by faction, the
/// members who differed from their faction or did not take part (a roll call's every
/// vote is in the structured content), and the mistakes.
pub fn render(answer: &VotesAnswer, served: Served, searched: &str) -> Rendered {
    let results: Vec<VoteResult> = answer
        .cases
        .iter()
        .flat_map(|c| c.decisions.iter().enumerate().map(move |(i, d)| result_of(c, i + 1, d)))
        .collect();
    let shown_to = answer.offset + answer.cases.len();
    let next_offset = (shown_to < answer.voted && !answer.cases.is_empty()).then_some(shown_to);
    let mut text = if answer.cases.is_empty() {
        if answer.voted > 0 {
            format!(
                "No more voted cases for {searched}{}: {} were found, this offset is past them.",
                provenance(served),
                answer.voted
            )
        } else if searched.starts_with("case ") {
            format!(
                "The Tweede Kamer has no {searched}{} (not found, or deleted). Check the number (tk_search with kind \
                 `cases` finds cases by words), or search with `query`.",
                provenance(served)
            )
        } else {
            format!(
                "No case put to the vote among the {} the Tweede Kamer has for {searched}{}. To widen: use fewer or \
                 other words (each must occur in the case's title or subject, as written), widen or drop the dates; \
                 tk_search with kind `cases` shows cases whether voted or not.",
                answer.matched.map_or("cases".to_owned(), |m| format!("{m} cases")),
                provenance(served)
            )
        }
    } else {
        let mut t = format!(
            "Votes for {searched}{}: {} voted case{} shown",
            provenance(served),
            answer.cases.len(),
            if answer.cases.len() == 1 { "" } else { "s" }
        );
        if !searched.starts_with("case ") {
            let _ = write!(t, " ({}–{} of {} voted", answer.offset + 1, shown_to, answer.voted);
            if answer.more {
                t.push_str(" among the newest 250 matching cases; narrow the words or dates for older ones");
            }
            t.push(')');
        }
        t.push('.');
        t
    };
    for case in &answer.cases {
        let c = &case.case;
        let _ = write!(
            text,
            "\n\n{} {} — {}{}",
            c.nummer.as_deref().unwrap_or(""),
            c.soort.as_deref().unwrap_or(""),
            c.onderwerp.as_deref().or(c.titel.as_deref()).unwrap_or(""),
            c.gestart_op
                .as_deref()
                .and_then(|d| d.get(..10))
                .map(|d| format!(" (started {d})"))
                .unwrap_or_default()
        );
        if case.decisions.is_empty() {
            let _ = write!(
                text,
                "\nNot put to the vote{}.",
                if case.other_decisions.is_empty() {
                    String::new()
                } else {
                    format!("; its decisions: {}", case.other_decisions.join(", "))
                }
            );
        }
        for (i, d) in case.decisions.iter().enumerate() {
            let r = result_of(case, i + 1, d);
            write_decision(&mut text, &r, d);
        }
    }
    if let Some(next) = next_offset {
        let _ = write!(text, "\n\nMore voted cases: call tk_votes again with `offset` {next}.");
    }
    let total = if searched.starts_with("case ") {
        answer.cases.len()
    } else {
        answer.voted
    };
    let shown = VotesShown {
        searched: searched.to_owned(),
        results,
        tally: crate::connectors::vocabulary::Tally {
            total: Some(total as u64),
            total_is_exact: !answer.more,
            next_offset: next_offset.map(|n| n as u64),
        },
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

fn write_decision(text: &mut String, r: &VoteResult, d: &DecisionVotes) {
    let how = match (r.vote_kind.as_deref(), r.roll_call) {
        (_, true) => "roll call",
        (Some("Met handopsteken"), _) => "show of hands",
        (Some(other), _) => other,
        (None, _) => "not voted",
    };
    let _ = write!(
        text,
        "\nDecision {} of {}: {} ({}; {}; {}).",
        r.decision_number,
        r.decisions,
        r.decision_text
            .as_deref()
            .or(r.decision.as_deref())
            .unwrap_or("(no text)"),
        r.decision.as_deref().unwrap_or("no kind"),
        how,
        if r.is_final { "final" } else { "not yet final" }
    );
    if d.votes.is_empty() {
        text.push_str(" No votes were cast on it.");
        return;
    }
    let _ = write!(
        text,
        " Voor {}, Tegen {}{}{}.",
        r.totals.voor,
        r.totals.tegen,
        if r.totals.niet_deelgenomen > 0 {
            format!(", not taking part {}", r.totals.niet_deelgenomen)
        } else {
            String::new()
        },
        if r.roll_call { " (members)" } else { " (seats)" }
    );
    if r.roll_call {
        for f in &r.factions {
            let _ = write!(
                text,
                "\n- {} ({}): {}",
                f.faction,
                match f.seats {
                    Some(1) => "1 seat".to_owned(),
                    Some(n) => format!("{n} seats"),
                    None => "seats unknown".to_owned(),
                },
                tally_words(&f.tally)
            );
            let line = majority(&f.tally);
            let others: Vec<String> = r
                .members
                .iter()
                .filter(|m| m.faction == f.faction && m.vote != line)
                .flat_map(|m| m.names.iter().map(|name| format!("{name} {}", m.vote)))
                .collect();
            if !others.is_empty() {
                let _ = write!(text, " — otherwise: {}", others.join(", "));
            }
        }
        text.push_str("\nEvery member's vote is in the structured content (`members`).");
    } else {
        for side in [Vote::For, Vote::Against, Vote::NotTakingPart] {
            let names: Vec<String> = r
                .factions
                .iter()
                .filter(|f| f.vote == side)
                .map(|f| {
                    format!(
                        "{} ({}){}",
                        f.faction,
                        f.seats.map_or("?".to_owned(), |s| s.to_string()),
                        if f.mistake { " [cast by mistake]" } else { "" }
                    )
                })
                .collect();
            if !names.is_empty() {
                let _ = write!(text, "\n- {side}: {}", names.join(", "));
            }
        }
    }
    for f in r.factions.iter().filter(|f| f.mistake) {
        let _ = write!(
            text,
            "\nMistake: {}'s vote is marked as cast by mistake (Vergissing); the Kamer counts it as cast, and so do \
             these totals.",
            f.faction
        );
    }
}

/// The faction's majority vote.
fn majority(t: &Tally) -> Vote {
    if t.voor >= t.tegen && t.voor >= t.niet_deelgenomen {
        Vote::For
    } else if t.tegen >= t.niet_deelgenomen {
        Vote::Against
    } else {
        Vote::NotTakingPart
    }
}

fn tally_words(t: &Tally) -> String {
    let mut parts = Vec::new();
    for (word, n) in [
        ("Voor", t.voor),
        ("Tegen", t.tegen),
        ("not taking part", t.niet_deelgenomen),
    ] {
        if n > 0 {
            parts.push(format!("{word} {n}"));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(status: &str, soort: &str) -> Besluit {
        Besluit {
            id: "be500000-0000-4000-8000-000000000001".into(),
            stemmings_soort: Some("Met handopsteken".into()),
            besluit_soort: Some(soort.into()),
            status: Some(status.into()),
            ..Besluit::default()
        }
    }

    #[test]
    fn only_a_final_decision_that_was_not_held_over_is_final() {
        assert!(is_final(&decision("Besluit", "Stemmen - aangenomen")));
        assert!(!is_final(&decision("Voorstel", "Stemmen - aangenomen")));
        assert!(!is_final(&decision("Besluit", "Stemmen - aangehouden")));
        assert_eq!(
            outcome(&decision("Besluit", "Stemmen - verworpen")),
            Some(Outcome::Rejected)
        );
    }

    #[test]
    fn votes_and_outcomes_are_written_as_before() {
        let json = |v: serde_json::Value| v.to_string();
        assert_eq!(
            json(serde_json::json!([
                Vote::For,
                Vote::Against,
                Vote::NotTakingPart,
                Vote::Split
            ])),
            r#"["Voor","Tegen","Niet deelgenomen","verdeeld"]"#
        );
        assert_eq!(
            json(serde_json::json!([
                Outcome::Adopted,
                Outcome::Rejected,
                Outcome::HeldOver
            ])),
            r#"["adopted","rejected","held over"]"#
        );
        assert_eq!(Vote::of_soort(Some("Tegen")), Vote::Against);
        assert_eq!(Vote::of_soort(Some("Niet deelgenomen")), Vote::NotTakingPart);
        assert_eq!(Vote::of_soort(None), Vote::NotTakingPart);
    }

    #[test]
    fn a_show_of_hands_counts_seats_and_flags_a_mistake() {
        let vote = |faction: &str, seats: i64, soort: &str, mistake: bool| Stemming {
            soort: Some(soort.into()),
            fractie_grootte: Some(seats),
            actor_fractie: Some(faction.into()),
            actor_naam: Some(faction.into()),
            vergissing: mistake,
            ..Stemming::default()
        };
        let case = CaseVotes {
            case: Zaak {
                nummer: Some("2025Z00001".into()),
                ..Zaak::default()
            },
            url: None,
            decisions: vec![DecisionVotes {
                decision: decision("Besluit", "Stemmen - verworpen"),
                votes: vec![vote("A", 80, "Tegen", true), vote("B", 70, "Voor", false)],
            }],
            other_decisions: Vec::new(),
        };
        let r = result_of(&case, 1, &case.decisions[0]);
        assert_eq!((r.totals.voor, r.totals.tegen), (70, 80));
        assert!(!r.roll_call && r.members.is_empty());
        assert!(r.factions[0].mistake && r.factions[0].faction == "A");
    }

    #[test]
    fn render_a_show_of_hands_with_a_mistake_then_a_roll_call() {
        let faction = |name: &str, seats: i64, soort: &str, mistake: bool| Stemming {
            besluit_id: Some("be500000-0000-4000-8000-000000000001".into()),
            soort: Some(soort.into()),
            fractie_grootte: Some(seats),
            actor_naam: Some(name.into()),
            actor_fractie: Some(name.into()),
            vergissing: mistake,
            ..Stemming::default()
        };
        let member = |name: &str, faction: &str, seats: i64, soort: &str| Stemming {
            persoon_id: Some(format!("9e500000-0000-4000-8000-{:012}", name.len())),
            actor_naam: Some(name.into()),
            ..faction_vote(faction, seats, soort)
        };
        fn faction_vote(name: &str, seats: i64, soort: &str) -> Stemming {
            Stemming {
                besluit_id: Some("be500000-0000-4000-8000-000000000002".into()),
                soort: Some(soort.into()),
                fractie_grootte: Some(seats),
                actor_fractie: Some(name.into()),
                ..Stemming::default()
            }
        }
        let hands = Besluit {
            id: "be500000-0000-4000-8000-000000000001".into(),
            besluit_tekst: Some("Verworpen.".into()),
            agendapunt_zaak_besluit_volgorde: Some(1),
            ..decision("Besluit", "Stemmen - verworpen")
        };
        let roll = Besluit {
            id: "be500000-0000-4000-8000-000000000002".into(),
            stemmings_soort: Some("Hoofdelijk".into()),
            besluit_tekst: Some("Aangenomen.".into()),
            agendapunt_zaak_besluit_volgorde: Some(2),
            ..decision("Besluit", "Stemmen - aangenomen")
        };
        let answer = VotesAnswer {
            cases: vec![CaseVotes {
                case: Zaak {
                    id: "2aa00000-0000-4000-8000-000000000001".into(),
                    nummer: Some("2025Z17647".into()),
                    soort: Some("Motie".into()),
                    onderwerp: Some("Motie van het lid Jansen over een landelijk verbod op consumentenvuurwerk".into()),
                    gestart_op: Some("2025-09-30T00:00:00+02:00".into()),
                    ..Zaak::default()
                },
                url: Some(
                    "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Zaak(2aa00000-0000-4000-8000-000000000001)"
                        .into(),
                ),
                decisions: vec![
                    DecisionVotes {
                        decision: hands,
                        votes: vec![
                            faction("PVV", 2, "Tegen", false),
                            faction("NSC", 1, "Tegen", true),
                            faction("D66", 2, "Voor", false),
                        ],
                    },
                    DecisionVotes {
                        decision: roll,
                        votes: vec![
                            member("Berg", "PVV", 2, "Tegen"),
                            member("Van Dijk", "PVV", 2, "Niet deelgenomen"),
                            member("De Vries", "NSC", 1, "Voor"),
                            member("Bosch", "D66", 2, "Voor"),
                            member("Van der Meer", "D66", 2, "Tegen"),
                        ],
                    },
                ],
                other_decisions: Vec::new(),
            }],
            matched: Some(1),
            voted: 1,
            offset: 0,
            more: false,
        };
        assert_eq!(
            keep_for(answer.cases.iter().flat_map(|c| &c.decisions).map(|d| &d.decision)),
            Keep::Normal,
            "final decisions are kept a month"
        );
        let r = render(&answer, Served::Fetched, "case 2025Z17647");
        crate::connectors::render_test::snapshot("tk_votes", &r, &answer);
    }

    #[test]
    fn the_paging_arguments_are_plain_integers() {
        let schema = serde_json::to_value(schemars::schema_for!(VotesArgs)).unwrap();
        for name in ["limit", "offset"] {
            let p = &schema["properties"][name];
            assert_eq!(p["type"], "integer", "{name}: {p}");
            assert!(p.get("format").is_none(), "{name}: {p}");
        }
    }
}
