//! The platform calls `tk_debates` and `tk_debate` share, each one request admitted and
//! counted as it is asked for (R-L8), one unit each, through the one path:
//! - a page of meetings with their reports (`meetings`, kept ten minutes);
//! - one meeting, or one report with its meeting (`meeting`, `report_record`, ten
//!   minutes: they name the report's version);
//! - an activity by number (`activity`, a month);
//! - a report read whole (`report`, weeks, under a key holding its id and `GewijzigdOp`:
//!   a corrected or newer version is a new key, read anew, and replaces the earlier one
//!   in every answer);
//! - the members list, page by page (`members_page`, a month each);
//! - the cases of a report's motions (`motion_cases`, a month).
//!
//! Which report of a meeting is read ([`chosen_report`]): a corrected one before an
//! uncorrected one before a casco one, then the latest `GewijzigdOp`.
//!
//! What this module does not do: render, or decide what a tool shows.

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Served};
use besluitbron_core::{PlatformId, Units};
use serde::{Deserialize, Serialize};

use super::members::{MAX_MEMBER_PAGES, Member, members_of};
use crate::call::{AnswerError, Call, Context, PlatformCall, Who};
use crate::driver::CallError;
use crate::platforms::http::PlatformError;
use crate::platforms::tk::vlos::Report;
use crate::platforms::tk::{
    Activiteit, DossierNumber, FractieZetelPersoon, MAX_MOTIONS_PER_REQUEST, MeetingSearch, MeetingsPage, TkClient,
    VergaderingVerslagen, Verslag, VerslagVergadering, ZaakDossiers,
};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// How a whole answer of several calls was served: the least settled of its parts.
pub fn served_of(parts: &[Served]) -> Served {
    [Served::Stale, Served::Fetched, Served::Coalesced]
        .into_iter()
        .find(|s| parts.contains(s))
        .unwrap_or(Served::Cached)
}

fn platform_error(e: PlatformError) -> AnswerError {
    AnswerError::Call(CallError::Platform(e))
}

/// A page of meetings matching `search` from record `skip` (a multiple of 250).
pub async fn meetings(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    search: &MeetingSearch,
    skip: u64,
) -> Result<(Arc<MeetingsPage>, Served), AnswerError> {
    let mut key = CacheKey::new(PLATFORM, DataClass::Search, "meetings").param("skip", skip.to_string());
    for (name, value) in [
        ("kind", &search.kind),
        ("date_from", &search.date_from),
        ("date_to", &search.date_to),
    ] {
        if let Some(v) = value {
            key = key.param(name, v.clone());
        }
    }
    let (client, search) = (Arc::clone(client), Arc::new(search.clone()));
    let pc = PlatformCall::new(key, Units::ONE, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move { Ok((client.meetings(&search, skip).await?, Feedback::default())) }
    });
    ctx.fetch(Who::Caller, call, pc).await
}

/// One request by the text `asked` (an id, a number), kept by `key`: `ask` is the
/// client's method for it.
async fn one<T, F, Fut>(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    key: CacheKey,
    asked: &str,
    ask: F,
) -> Result<(Arc<T>, Served), AnswerError>
where
    T: Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    F: Fn(Arc<TkClient>, Arc<str>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<T, PlatformError>> + Send + 'static,
{
    let (client, asked, ask) = (Arc::clone(client), Arc::<str>::from(asked), Arc::new(ask));
    let pc = PlatformCall::new(key, Units::ONE, move || {
        let fut = ask(Arc::clone(&client), Arc::clone(&asked));
        async move { Ok((fut.await?, Feedback::default())) }
    });
    ctx.fetch(Who::Caller, call, pc).await
}

/// The plenary meeting `number` of the year `year`, with its reports.
pub async fn plenary_meeting(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    year: &str,
    number: u32,
) -> Result<(Arc<VergaderingVerslagen>, Served), AnswerError> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "plenary_meeting")
        .param("year", year.to_owned())
        .param("number", number.to_string());
    one(ctx, call, client, key, year, move |c, year| async move {
        c.plenary_meeting(&year, number).await
    })
    .await
}

/// One meeting with its reports.
pub async fn meeting(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    id: &str,
) -> Result<(Arc<VergaderingVerslagen>, Served), AnswerError> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "meeting").param("id", id.to_owned());
    one(ctx, call, client, key, id, |c, id| async move { c.meeting(&id).await }).await
}

/// One report's record with its meeting.
pub async fn report_record(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    id: &str,
) -> Result<(Arc<VerslagVergadering>, Served), AnswerError> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "report_record").param("id", id.to_owned());
    one(
        ctx,
        call,
        client,
        key,
        id,
        |c, id| async move { c.report_record(&id).await },
    )
    .await
}

/// The activity numbered `number`.
pub async fn activity(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    number: &str,
) -> Result<(Arc<Activiteit>, Served), AnswerError> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "activity").param("number", number.to_owned());
    one(
        ctx,
        call,
        client,
        key,
        number,
        |c, n| async move { c.activity(&n).await },
    )
    .await
}

/// The report `verslag` read whole, kept for weeks under its id and `GewijzigdOp`.
pub async fn report(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    verslag: &Verslag,
) -> Result<(Arc<Report>, Served), AnswerError> {
    let id = verslag.id.to_ascii_lowercase();
    let key = CacheKey::new(PLATFORM, DataClass::Document, "report")
        .param("id", id.clone())
        .param("changed_at", verslag.gewijzigd_op.clone().unwrap_or_default());
    one(ctx, call, client, key, &id, |c, id| async move { c.report(&id).await }).await
}

/// One kept page of the members list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembersPage {
    /// Its seats.
    pub seats: Vec<FractieZetelPersoon>,
    /// The platform's link to the next page.
    pub next: Option<String>,
}

/// The members list: every page of seats, each its own call kept a month.
pub async fn members(ctx: &Context, call: &Call, client: &Arc<TkClient>) -> Result<(Vec<Member>, Served), AnswerError> {
    let mut seats = Vec::new();
    let mut servings = Vec::new();
    let mut url = Some(client.members_url().map_err(platform_error)?.to_string());
    let mut page = 0;
    while let Some(at) = url.take() {
        if page == MAX_MEMBER_PAGES {
            return Err(platform_error(PlatformError::TooManyPages {
                platform: PLATFORM,
                pages: MAX_MEMBER_PAGES,
            }));
        }
        let key = CacheKey::new(PLATFORM, DataClass::Reference, "members_page").param("page", page.to_string());
        let (client, at) = (Arc::clone(client), Arc::<str>::from(at.as_str()));
        let pc = PlatformCall::new(key, Units::ONE, move || {
            let (client, at) = (Arc::clone(&client), Arc::clone(&at));
            async move {
                let (seats, next) = client.members_page(&at).await?;
                Ok((MembersPage { seats, next }, Feedback::default()))
            }
        });
        let (got, served) = ctx.fetch(Who::Caller, call, pc).await?;
        servings.push(served);
        seats.extend(got.seats.iter().cloned());
        url = got.next.clone();
        page += 1;
    }
    Ok((members_of(&seats), served_of(&servings)))
}

/// The kept cases of some motions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MotionCases {
    /// The cases found.
    pub cases: Vec<ZaakDossiers>,
}

/// The cases of `motions` (deduplicated, in order), [`MAX_MOTIONS_PER_REQUEST`] a
/// request, each request its own call kept a month; at most `max_requests` requests.
pub async fn motion_cases(
    ctx: &Context,
    call: &Call,
    client: &Arc<TkClient>,
    motions: &[DossierNumber],
    max_requests: usize,
) -> Result<(Vec<ZaakDossiers>, Vec<Served>), AnswerError> {
    let mut asked: Vec<DossierNumber> = Vec::new();
    for m in motions {
        if !asked.contains(m) {
            asked.push(m.clone());
        }
    }
    let mut found = Vec::new();
    let mut servings = Vec::new();
    for chunk in asked.chunks(MAX_MOTIONS_PER_REQUEST).take(max_requests) {
        let cited: Vec<String> = chunk.iter().map(DossierNumber::cited).collect();
        let key = CacheKey::new(PLATFORM, DataClass::Reference, "motion_cases").param("motions", cited.join(","));
        let (client, chunk) = (Arc::clone(client), Arc::new(chunk.to_vec()));
        let pc = PlatformCall::new(key, Units::ONE, move || {
            let (client, chunk) = (Arc::clone(&client), Arc::clone(&chunk));
            async move {
                let cases = client.motion_cases(&chunk).await?;
                Ok((MotionCases { cases }, Feedback::default()))
            }
        });
        let (got, served) = ctx.fetch(Who::Caller, call, pc).await?;
        servings.push(served);
        found.extend(got.cases.iter().cloned());
    }
    Ok((found, servings))
}

/// How far along a report's status is: corrected before uncorrected before casco.
fn status_rank(status: Option<&str>) -> u8 {
    match status.unwrap_or("") {
        "Gecorrigeerd" | "Gerectificeerd" => 3,
        "Ongecorrigeerd" => 2,
        "Casco" => 1,
        _ => 0,
    }
}

/// The report of a meeting to read: not deleted, the most corrected, then the latest
/// `GewijzigdOp`; `None` when the meeting has none.
pub fn chosen_report(verslagen: &[Verslag]) -> Option<&Verslag> {
    verslagen
        .iter()
        .filter(|v| !v.verwijderd && crate::platforms::http::is_guid(&v.id.to_ascii_lowercase()))
        .max_by(|a, b| {
            (status_rank(a.status.as_deref()), &a.gewijzigd_op)
                .cmp(&(status_rank(b.status.as_deref()), &b.gewijzigd_op))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verslag(n: u8, status: &str, changed: &str) -> Verslag {
        Verslag {
            id: format!("00000000-0000-4000-8000-00000000000{n}"),
            status: Some(status.into()),
            gewijzigd_op: Some(changed.into()),
            ..Verslag::default()
        }
    }

    #[test]
    fn a_corrected_report_replaces_an_uncorrected_one_then_the_latest_wins() {
        let casco = verslag(1, "Casco", "2025-07-03T09:00:00");
        let first = verslag(2, "Ongecorrigeerd", "2025-07-03T18:00:00");
        let later = verslag(3, "Ongecorrigeerd", "2025-07-04T10:00:00");
        let corrected = verslag(4, "Gecorrigeerd", "2025-07-01T10:00:00");
        assert_eq!(chosen_report(std::slice::from_ref(&casco)), Some(&casco));
        assert_eq!(chosen_report(&[casco.clone(), first.clone()]), Some(&first));
        assert_eq!(chosen_report(&[later.clone(), first.clone()]), Some(&later));
        assert_eq!(chosen_report(&[first, corrected.clone(), later]), Some(&corrected));
        let gone = Verslag {
            verwijderd: true,
            ..corrected
        };
        assert_eq!(chosen_report(&[gone]), None);
    }
}
