//! The fetch of `tk_votes`: the cases with their decisions, then the votes on the voted
//! decisions page after page, each request its own platform call through the one path,
//! admitted and counted as it is asked for (R-L8); and what an answer keeps
//! ([`VotesAnswer`]).
//!
//! Invariants: at most `MAX_VOTED_DECISIONS` decisions are asked about, and at most
//! `MAX_VOTE_PAGES` pages are read (one more is an error, never a shorter answer); every
//! page is kept as long as the least final decision it concerns allows. What it does not
//! do: count or render the votes (`result.rs`, `render.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Keep, Served};
use serde::{Deserialize, Serialize};

use crate::call::{AnswerError, Call, Context, PlatformCall, Who};
use crate::platforms::tk::{
    Besluit, CasesWithDecisions, MAX_VOTE_PAGES, MAX_VOTED_DECISIONS, Stemming, TkClient, Zaak, ZaakBesluiten,
};

use super::args::{Asked, MAX_CASES};
use super::decisions::{is_vote, keep_for, split_decisions};
use crate::platforms::tk::PLATFORM;

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

/// What one page of votes keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VotesPage {
    /// The votes of the page (not deleted).
    pub votes: Vec<Stemming>,
    /// The platform's link to the next page.
    pub next: Option<String>,
}

/// A case chosen to be shown, with its voted decisions and the kinds of its others.
type Chosen<'a> = (&'a ZaakBesluiten, Vec<Besluit>, Vec<String>);

/// How a whole answer of several calls was served: the least settled of its parts.
fn served_of(parts: &[Served]) -> Served {
    [Served::Stale, Served::Fetched, Served::Coalesced]
        .into_iter()
        .find(|s| parts.contains(s))
        .unwrap_or(Served::Cached)
}

/// Asks the platform, one admitted call per request: the cases, then each page of the
/// votes on their voted decisions; the answer and how it was served.
pub(super) async fn fetch(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    key: CacheKey,
    asked: &Arc<Asked>,
) -> Result<(VotesAnswer, Served), AnswerError> {
    let (found, served) = ctx.fetch(Who::Caller, call, cases_call(client, key, asked)).await?;
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
    let (cases, ids) = within_the_decisions_cap(chosen);
    let votes = if ids.is_empty() {
        Vec::new()
    } else {
        let keep = keep_for(cases.iter().flat_map(|(_, decisions, _)| decisions.iter()));
        fetch_votes(ctx, call, client, &ids, keep, &mut servings).await?
    };
    let answer = VotesAnswer {
        cases: with_their_votes(client, cases, votes),
        matched: found.count,
        voted: voted.len(),
        offset,
        more: found.more,
    };
    Ok((answer, served_of(&servings)))
}

/// The call for the cases `asked` names, kept as long as their voted decisions allow.
fn cases_call(client: &Arc<TkClient>, key: CacheKey, asked: &Arc<Asked>) -> PlatformCall<CasesWithDecisions> {
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
}

/// The `chosen` cases whose voted decisions fit `MAX_VOTED_DECISIONS` together (the first
/// always), and the ids of those decisions, lower case.
fn within_the_decisions_cap(chosen: Vec<&ZaakBesluiten>) -> (Vec<Chosen<'_>>, Vec<String>) {
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
    (cases, ids)
}

/// The votes on the decisions `ids`, page after page as the platform links them, each
/// page its own call kept as `keep` says; how each was served is added to `servings`.
async fn fetch_votes(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    ids: &[String],
    keep: Keep,
    servings: &mut Vec<Served>,
) -> Result<Vec<Stemming>, AnswerError> {
    let platform_error = |e| AnswerError::Call(crate::driver::CallError::Platform(e));
    let mut votes = Vec::new();
    let mut url = Some(client.votes_url(ids).map_err(platform_error)?.to_string());
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
        let (got, served) = ctx
            .fetch(Who::Caller, call, votes_page_call(client, key, &at, keep))
            .await?;
        servings.push(served);
        votes.extend(got.votes.iter().cloned());
        url = got.next.clone();
        page += 1;
    }
    Ok(votes)
}

/// The call for the page of votes at `at`.
fn votes_page_call(client: &Arc<TkClient>, key: CacheKey, at: &str, keep: Keep) -> PlatformCall<VotesPage> {
    let client = Arc::clone(client);
    let at: Arc<str> = Arc::from(at);
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
}

/// The chosen `cases` as kept, each decision with its `votes`.
fn with_their_votes(client: &TkClient, cases: Vec<Chosen<'_>>, votes: Vec<Stemming>) -> Vec<CaseVotes> {
    let mut by_decision: BTreeMap<String, Vec<Stemming>> = BTreeMap::new();
    for v in votes {
        let key = v.besluit_id.clone().unwrap_or_default().to_ascii_lowercase();
        by_decision.entry(key).or_default().push(v);
    }
    cases
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
        .collect()
}
