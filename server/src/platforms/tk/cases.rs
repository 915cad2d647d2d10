//! Kamer cases through the client: the searches of cases, a case (or the cases found
//! by words) with its decisions, and the pages of votes cast on those decisions.
//!
//! Invariants: one question asks about at most [`MAX_VOTED_DECISIONS`] decisions, each
//! by its GUID; a page of votes is read only at an address on the base URL at the
//! `Stemming` set. What it does not do: follow the vote pages (the caller admits each
//! page as it is asked for, and follows at most [`MAX_VOTE_PAGES`](super::MAX_VOTE_PAGES)).

use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::super::http::{self, PlatformError};
use super::pages::{Continuation, TkPage, TkSearch};
use super::wire::{Stemming, Zaak, ZaakBesluiten};
use super::{
    EntitySet, MAX_VOTED_DECISIONS, PLATFORM, Searchable, TkClient, TkError, is_case_number, is_guid, quote_literal,
};

/// Cases found with their decisions (`Zaak?$expand=Besluit`): at most one page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasesWithDecisions {
    /// The cases, newest first.
    pub cases: Vec<ZaakBesluiten>,
    /// Total matches, when asked for.
    pub count: Option<u64>,
    /// The platform had more than this page.
    pub more: bool,
}

impl TkClient {
    /// The first page of cases matching `search`, most recently started first.
    pub async fn search_cases(&self, search: &TkSearch) -> Result<TkPage<Zaak>, TkError> {
        self.search::<Zaak>(search).await
    }

    /// The page of cases a continuation from [`TkClient::search_cases`] points at.
    pub async fn next_cases(&self, next: &Continuation) -> Result<TkPage<Zaak>, TkError> {
        self.next::<Zaak>(next).await
    }

    /// The case numbered `number` (e.g. `2025Z17647`, not deleted) with its decisions.
    pub async fn case_with_decisions(&self, number: &str) -> Result<CasesWithDecisions, TkError> {
        if !is_case_number(number) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_case_number".to_owned(),
                message: format!("`{}` is not a case number (such as 2025Z17647)", http::brief(number)),
            });
        }
        let filter = format!("Nummer eq {} and Verwijderd eq false", quote_literal(number));
        self.cases_with_decisions(&filter).await
    }

    /// The cases matching `search` (words in the title or subject, dates on `GestartOp`),
    /// most recently started first, with their decisions: the platform's first page only.
    pub async fn search_cases_with_decisions(&self, search: &TkSearch) -> Result<CasesWithDecisions, TkError> {
        let filter = search
            .filter(Zaak::DATE_FIELD)?
            .unwrap_or_else(|| "Verwijderd eq false".to_owned());
        self.cases_with_decisions(&filter).await
    }

    async fn cases_with_decisions(&self, filter: &str) -> Result<CasesWithDecisions, TkError> {
        let mut url = http::join(PLATFORM, &self.base, ZaakBesluiten::SET)?;
        url.query_pairs_mut()
            .append_pair("$filter", filter)
            .append_pair("$orderby", &format!("{} desc", Zaak::DATE_FIELD))
            .append_pair("$count", "true")
            .append_pair("$expand", "Besluit");
        let (page, next) = self.page_with_link::<ZaakBesluiten>(url).await?;
        Ok(CasesWithDecisions {
            cases: page.items,
            count: page.count,
            more: next.is_some(),
        })
    }

    /// The first page of the votes cast on the decisions `besluit_ids` (GUIDs, at most
    /// [`MAX_VOTED_DECISIONS`]): its URL, or why it cannot be asked.
    pub fn votes_url(&self, besluit_ids: &[String]) -> Result<Url, TkError> {
        let bad = |message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: "invalid_decisions".to_owned(),
            message,
        };
        if besluit_ids.is_empty() || besluit_ids.len() > MAX_VOTED_DECISIONS {
            return Err(bad(format!(
                "{} decisions asked; ask for 1 to {MAX_VOTED_DECISIONS}",
                besluit_ids.len()
            )));
        }
        if let Some(id) = besluit_ids.iter().find(|id| !is_guid(id)) {
            return Err(bad(format!("`{}` is not a decision id (a GUID)", http::brief(id))));
        }
        let ids: Vec<String> = besluit_ids.iter().map(|id| format!("Besluit_Id eq {id}")).collect();
        let mut url = http::join(PLATFORM, &self.base, Stemming::SET)?;
        url.query_pairs_mut()
            .append_pair("$filter", &format!("Verwijderd eq false and ({})", ids.join(" or ")));
        Ok(url)
    }

    /// One page of votes: at `url` ([`TkClient::votes_url`], or the next-page link a page
    /// gave, checked on the base URL at the Stemming set); its votes (not deleted) and the
    /// next page's link, when the platform gave one. One request: the caller admits each
    /// page as it is asked for, and follows at most [`MAX_VOTE_PAGES`].
    pub async fn votes_page(&self, url: &str) -> Result<(Vec<Stemming>, Option<String>), TkError> {
        let url = self.check_link(Stemming::SET, url)?;
        let (page, next): (TkPage<Stemming>, _) = self.page_with_link(url).await?;
        let votes = page.items.into_iter().filter(|v| !v.verwijderd).collect();
        Ok((votes, next.map(|u| u.to_string())))
    }

    /// The record address of the case `id` (a GUID), without asking the platform.
    pub fn case_url(&self, id: &str) -> Option<String> {
        is_guid(id)
            .then(|| http::join(PLATFORM, &self.base, &format!("Zaak({id})")).ok())
            .flatten()
            .map(String::from)
    }
}
