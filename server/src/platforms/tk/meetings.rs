//! The Tweede Kamer's meetings and their reports over OData (PLATFORMS.md §3 and §11):
//! meetings found by kind and day (`Vergadering?$expand=Verslag`), one meeting or one
//! report by id, an activity by its number (`Activiteit`), a report's VLOS file
//! (`Verslag({id})/resource`, read by [`super::vlos`]), the members with their factions
//! (`FractieZetelPersoon?$expand=Persoon,FractieZetel($expand=Fractie)`, page by page) and
//! the cases of motions by dossier and number (`Zaak?$expand=Kamerstukdossier`).
//!
//! Invariants: every method is exactly one request (the caller admits each as it is
//! asked for); text put into a filter is a checked number, date or GUID, or an OData
//! string literal; a next-page link is followed only on the base URL at its entity
//! set's path. A report that is not a VLOS document, or is cut short, is
//! [`PlatformError::Unreadable`], never an empty report.
//!
//! What this module does not do: decide which report of a meeting to read (the
//! connector does, by status and `GewijzigdOp`), or resolve a member's name.

use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::http::{self, Asked, PlatformError};
use super::vlos::{self, Report};
use super::wire::{Activiteit, FractieZetelPersoon, VergaderingVerslagen, VerslagVergadering, ZaakDossiers};
use super::{EntitySet, PLATFORM, TkClient, TkError, TkPage, is_activity_number, quote_literal, refused};

/// Motions whose cases one request asks for (each adds a clause to the filter).
pub const MAX_MOTIONS_PER_REQUEST: usize = 30;

impl EntitySet for VergaderingVerslagen {
    const SET: &'static str = "Vergadering";
}

impl EntitySet for VerslagVergadering {
    const SET: &'static str = "Verslag";
}

impl EntitySet for Activiteit {
    const SET: &'static str = "Activiteit";
}

impl EntitySet for FractieZetelPersoon {
    const SET: &'static str = "FractieZetelPersoon";
}

impl EntitySet for ZaakDossiers {
    const SET: &'static str = "Zaak";
}

/// Which meetings: their kind and days.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MeetingSearch {
    /// `Plenair` or `Commissie`.
    pub kind: Option<String>,
    /// First day, `YYYY-MM-DD`.
    pub date_from: Option<String>,
    /// Last day, inclusive.
    pub date_to: Option<String>,
}

impl MeetingSearch {
    /// The `$filter`: not deleted, of the kind, within the days.
    pub fn filter(&self) -> Result<String, TkError> {
        let mut clauses = vec!["Verwijderd eq false".to_owned()];
        if let Some(kind) = &self.kind {
            clauses.push(format!("Soort eq {}", quote_literal(kind)));
        }
        for (date, op) in [(&self.date_from, "ge"), (&self.date_to, "le")] {
            if let Some(date) = date {
                if !crate::calendar::is_day(date) {
                    return Err(refused(
                        "invalid_date",
                        format!("`{}` is not a date written YYYY-MM-DD", http::brief(date)),
                    ));
                }
                clauses.push(format!("Datum {op} {date}"));
            }
        }
        Ok(clauses.join(" and "))
    }
}

/// One page of meetings with their reports, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeetingsPage {
    /// The meetings (at most 250).
    pub meetings: Vec<VergaderingVerslagen>,
    /// Meetings the search matches (the platform's count).
    pub count: Option<u64>,
    /// The platform has a page after this one.
    pub more: bool,
}

/// A dossier and a number in it: what a report says of a motion (`36284`, `45`;
/// `21501-20`, `915`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DossierNumber {
    /// The dossier's number.
    pub dossier: i64,
    /// Its addition (`20`, `VII`), if any.
    pub addition: Option<String>,
    /// The number in the dossier.
    pub number: i64,
}

impl DossierNumber {
    /// Reads a report's dossier (`36284`, `21501-20`, `36200 VII`) and number (`45`).
    pub fn parse(dossier: &str, number: &str) -> Option<DossierNumber> {
        let dossier = dossier.trim();
        let split = dossier.find(|c: char| !c.is_ascii_digit()).unwrap_or(dossier.len());
        let (digits, rest) = dossier.split_at(split);
        let addition = rest.trim_start_matches(['-', ' ']).trim();
        let plain = |s: &str| !s.is_empty() && s.len() <= 12 && s.chars().all(|c| c.is_ascii_alphanumeric());
        if (!addition.is_empty() && !plain(addition)) || digits.is_empty() || digits.len() > 9 {
            return None;
        }
        let number = number.trim();
        if number.is_empty() || number.len() > 9 || !number.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some(DossierNumber {
            dossier: digits.parse().ok()?,
            addition: (!addition.is_empty()).then(|| addition.to_owned()),
            number: number.parse().ok()?,
        })
    }

    /// `36284-45`, `21501-20-915`: the Kamer's way of citing it.
    pub fn cited(&self) -> String {
        match &self.addition {
            Some(a) => format!("{}-{a}-{}", self.dossier, self.number),
            None => format!("{}-{}", self.dossier, self.number),
        }
    }

    /// Whether `zaak` is this motion's case.
    pub fn is_case(&self, zaak: &ZaakDossiers) -> bool {
        zaak.volgnummer == Some(self.number)
            && zaak.dossiers.iter().any(|d| {
                d.nummer == Some(self.dossier)
                    && d.toevoeging.as_deref().map(str::trim).filter(|t| !t.is_empty()) == self.addition.as_deref()
            })
    }
}

impl TkClient {
    /// One page of meetings matching `search` with their reports, newest first, from
    /// record `skip` (a multiple of 250).
    pub async fn meetings(&self, search: &MeetingSearch, skip: u64) -> Result<MeetingsPage, TkError> {
        let mut url = http::join(PLATFORM, &self.base, VergaderingVerslagen::SET)?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("$filter", &search.filter()?)
                .append_pair("$orderby", "Datum desc,Aanvangstijd desc")
                .append_pair("$expand", "Verslag")
                .append_pair("$count", "true");
            if skip > 0 {
                q.append_pair("$skip", &skip.to_string());
            }
        }
        let (page, next): (TkPage<VergaderingVerslagen>, _) = self.page_with_link(url).await?;
        Ok(MeetingsPage {
            meetings: page.items,
            count: page.count,
            more: next.is_some(),
        })
    }

    /// The plenary meeting numbered `number` in the parliamentary year `year`
    /// (`2024-2025`), with its reports: the meeting a plenary report's page names.
    pub async fn plenary_meeting(&self, year: &str, number: u32) -> Result<VergaderingVerslagen, TkError> {
        let valid_year =
            year.len() == 9 && year.as_bytes()[4] == b'-' && year.chars().filter(char::is_ascii_digit).count() == 8;
        if !valid_year {
            return Err(refused(
                "invalid_year",
                format!("`{}` is not a parliamentary year such as 2024-2025", http::brief(year)),
            ));
        }
        let filter = format!(
            "Verwijderd eq false and Soort eq 'Plenair' and Vergaderjaar eq {} and VergaderingNummer eq {number}",
            quote_literal(year)
        );
        self.first_where(&filter, Some("Verslag"), || {
            format!("plenary meeting {number} of {year}")
        })
        .await
    }

    /// One meeting by its GUID, with its reports.
    pub async fn meeting(&self, id: &str) -> Result<VergaderingVerslagen, TkError> {
        let url = self.record_url("Vergadering", id, "Verslag")?;
        let fetched = self.http.get(url).await?;
        let what = format!("meeting {}", http::brief(id));
        self.decode(&fetched, Asked::Record(&what))
    }

    /// One report's record by its GUID, with its meeting.
    pub async fn report_record(&self, id: &str) -> Result<VerslagVergadering, TkError> {
        let url = self.record_url("Verslag", id, "Vergadering")?;
        let fetched = self.http.get(url).await?;
        let what = format!("report {}", http::brief(id));
        self.decode(&fetched, Asked::Record(&what))
    }

    fn record_url(&self, set: &str, id: &str, expand: &str) -> Result<Url, TkError> {
        if !http::is_guid(id) {
            return Err(refused(
                "invalid_guid",
                format!("`{}` is not an id (a GUID such as 29d8cf68-…)", http::brief(id)),
            ));
        }
        let mut url = http::join(PLATFORM, &self.base, &format!("{set}({id})"))?;
        url.query_pairs_mut().append_pair("$expand", expand);
        Ok(url)
    }

    /// The activity numbered `number` (e.g. `2025A04597`, not deleted).
    pub async fn activity(&self, number: &str) -> Result<Activiteit, TkError> {
        if !is_activity_number(number) {
            return Err(refused(
                "invalid_activity_number",
                format!(
                    "`{}` is not an activity number (such as 2025A04597)",
                    http::brief(number)
                ),
            ));
        }
        let filter = format!("Nummer eq {} and Verwijderd eq false", quote_literal(number));
        self.first_where(&filter, None, || format!("activity {number}")).await
    }

    /// The report `id` (a `Verslag` GUID): its VLOS file, read. A file that is not a
    /// complete VLOS report is [`PlatformError::Unreadable`].
    pub async fn report(&self, id: &str) -> Result<Report, TkError> {
        if !http::is_guid(id) {
            return Err(PlatformError::Garbage {
                platform: PLATFORM,
                detail: "a Verslag id is not a GUID".into(),
            });
        }
        let url = http::join(PLATFORM, &self.base, &format!("Verslag({id})/resource"))?;
        let file = self.file(url.as_str(), &format!("report {id}")).await?;
        let name = format!("report {id}");
        // Parsing a report of a megabyte is CPU work: off the runtime's threads.
        let read = tokio::task::spawn_blocking(move || vlos::read_report(&file.bytes))
            .await
            .map_err(|e| PlatformError::Internal {
                platform: PLATFORM,
                detail: format!("reading the report failed: {e}"),
            })?;
        read.map_err(|e| PlatformError::Unreadable {
            platform: PLATFORM,
            document: name,
            detail: e.to_string(),
        })
    }

    /// The first page of the members with their factions: its address.
    pub fn members_url(&self) -> Result<Url, TkError> {
        let mut url = http::join(PLATFORM, &self.base, FractieZetelPersoon::SET)?;
        url.query_pairs_mut()
            .append_pair("$filter", "Verwijderd eq false")
            .append_pair("$expand", "Persoon,FractieZetel($expand=Fractie)");
        Ok(url)
    }

    /// One page of members' seats at `url` ([`TkClient::members_url`], or the next-page
    /// link a page gave, checked on the base URL at the set) and the next page's link.
    pub async fn members_page(&self, url: &str) -> Result<(Vec<FractieZetelPersoon>, Option<String>), TkError> {
        let url = self.check_link(FractieZetelPersoon::SET, url)?;
        let (page, next): (TkPage<FractieZetelPersoon>, _) = self.page_with_link(url).await?;
        let seats = page.items.into_iter().filter(|s| !s.verwijderd).collect();
        Ok((seats, next.map(|u| u.to_string())))
    }

    /// The cases of the motions `motions` (at most [`MAX_MOTIONS_PER_REQUEST`]), by
    /// dossier and number: `Zaak` of kind `Motie` whose `Volgnummer` is the number, in a
    /// dossier with that number and addition; with their dossiers.
    pub async fn motion_cases(&self, motions: &[DossierNumber]) -> Result<Vec<ZaakDossiers>, TkError> {
        if motions.is_empty() || motions.len() > MAX_MOTIONS_PER_REQUEST {
            return Err(refused(
                "invalid_motions",
                format!(
                    "{} motions asked; ask for 1 to {MAX_MOTIONS_PER_REQUEST}",
                    motions.len()
                ),
            ));
        }
        let clauses: Vec<String> = motions
            .iter()
            .map(|m| {
                let addition = match &m.addition {
                    Some(a) => format!(" and d/Toevoeging eq {}", quote_literal(a)),
                    None => String::new(),
                };
                format!(
                    "(Volgnummer eq {} and Kamerstukdossier/any(d:d/Nummer eq {}{addition}))",
                    m.number, m.dossier
                )
            })
            .collect();
        let mut url = http::join(PLATFORM, &self.base, ZaakDossiers::SET)?;
        url.query_pairs_mut()
            .append_pair(
                "$filter",
                &format!(
                    "Verwijderd eq false and Soort eq 'Motie' and ({})",
                    clauses.join(" or ")
                ),
            )
            .append_pair("$expand", "Kamerstukdossier");
        let (page, _): (TkPage<ZaakDossiers>, _) = self.page_with_link(url).await?;
        Ok(page.items.into_iter().filter(|z| !z.verwijderd).collect())
    }

    /// The page of a meeting on tweedekamer.nl: a plenary meeting's report
    /// (`kamerstukken/plenaire_verslagen/detail/{year}/{number}`).
    pub fn plenary_page(year: &str, number: i64) -> String {
        format!("https://www.tweedekamer.nl/kamerstukken/plenaire_verslagen/detail/{year}/{number}")
    }

    /// The page of an activity on tweedekamer.nl by its number: a plenary kind's under
    /// `plenaire_vergaderingen`, any other under `commissievergaderingen`.
    pub fn activity_page(number: &str, kind: Option<&str>) -> String {
        let kind = kind.unwrap_or("").to_lowercase();
        if kind.contains("plenair") || kind.contains("stemmingen") || kind.contains("vragenuur") {
            format!(
                "https://www.tweedekamer.nl/debat_en_vergadering/plenaire_vergaderingen/details/activiteit?id={number}"
            )
        } else {
            format!("https://www.tweedekamer.nl/debat_en_vergadering/commissievergaderingen/details?id={number}")
        }
    }

    /// The record address of the meeting `id` (a GUID), without asking the platform.
    pub fn meeting_url(&self, id: &str) -> Option<String> {
        http::is_guid(id)
            .then(|| http::join(PLATFORM, &self.base, &format!("Vergadering({id})")).ok())
            .flatten()
            .map(String::from)
    }

    /// The address of the report `id`'s file, without asking the platform.
    pub fn report_file_url(&self, id: &str) -> Option<String> {
        http::is_guid(id)
            .then(|| http::join(PLATFORM, &self.base, &format!("Verslag({id})/resource")).ok())
            .flatten()
            .map(String::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::http::HttpConfig;
    use crate::platforms::tk::wire::Kamerstukdossier;

    #[test]
    fn a_meeting_search_filters_kind_and_days_and_refuses_a_bad_date() {
        let search = MeetingSearch {
            kind: Some("Commissie".into()),
            date_from: Some("2025-07-01".into()),
            date_to: Some("2025-07-03".into()),
        };
        assert_eq!(
            search.filter().unwrap(),
            "Verwijderd eq false and Soort eq 'Commissie' and Datum ge 2025-07-01 and Datum le 2025-07-03"
        );
        let bad = MeetingSearch {
            date_to: Some("2025-13-01".into()),
            ..MeetingSearch::default()
        };
        assert!(matches!(
            bad.filter(),
            Err(PlatformError::BadRequest { sent: false, .. })
        ));
    }

    #[test]
    fn dossier_numbers_are_read_as_the_report_writes_them() {
        let plain = DossierNumber::parse("36284", "45").unwrap();
        assert_eq!(
            (plain.dossier, plain.addition.as_deref(), plain.number),
            (36284, None, 45)
        );
        assert_eq!(plain.cited(), "36284-45");
        let added = DossierNumber::parse("21501-20", "915").unwrap();
        assert_eq!(added.addition.as_deref(), Some("20"));
        assert_eq!(added.cited(), "21501-20-915");
        assert_eq!(
            DossierNumber::parse("36200 VII", "5").unwrap().addition.as_deref(),
            Some("VII")
        );
        for (d, n) in [
            ("", "4"),
            ("36284", ""),
            ("36284", "4a"),
            ("abc", "1"),
            ("36284-x')", "1"),
        ] {
            assert!(DossierNumber::parse(d, n).is_none(), "{d} {n}");
        }
        let zaak = ZaakDossiers {
            volgnummer: Some(915),
            dossiers: vec![Kamerstukdossier {
                nummer: Some(21501),
                toevoeging: Some("20".into()),
                ..Kamerstukdossier::default()
            }],
            ..ZaakDossiers::default()
        };
        assert!(added.is_case(&zaak));
        assert!(
            !DossierNumber::parse("21501", "915").unwrap().is_case(&zaak),
            "the addition counts"
        );
    }

    #[test]
    fn activity_numbers_and_pages() {
        assert!(is_activity_number("2025A04597"));
        assert!(!is_activity_number("2025Z04597") && !is_activity_number("2025A0459"));
        assert!(TkClient::activity_page("2025A04597", Some("Plenair debat")).contains("plenaire_vergaderingen"));
        assert!(TkClient::activity_page("2025A04496", Some("Commissiedebat")).contains("commissievergaderingen"));
        let c = TkClient::new("http://127.0.0.1:9/OData/v4/2.0", &HttpConfig::default()).unwrap();
        assert!(c.record_url("Vergadering", "nope", "Verslag").is_err());
        assert_eq!(
            c.members_url().unwrap().as_str(),
            "http://127.0.0.1:9/OData/v4/2.0/FractieZetelPersoon?%24filter=Verwijderd+eq+false&%24expand=Persoon%2CFractieZetel%28%24expand%3DFractie%29"
        );
    }
}
