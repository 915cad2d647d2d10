//! What `fetch` reads for the Tweede Kamer: each kind of id [`super::ids`] tells apart,
//! read by the tool that answers it (a meeting or report by `tk_debate`, a document by
//! its text, a case by its votes).
//!
//! What this module does not do: parse ids (`ids.rs` does) or answer anything itself.

use super::debate::{DebateArgs, debate_read};
use super::ids::{Named, meeting_id, named};
use super::text::{TextArgs, text_read};
use super::votes::{VotesArgs, votes_read};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading};

/// What the Tweede Kamer reads.
pub const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&super::debate::TOOL, &super::text::TOOL],
    forms: &[
        IdForm {
            what: "a Tweede Kamer document number or GUID",
            example: "2021D02426",
            sample: Some("72f7ab9b-dc59-4e67-8a04-798a744c256e"),
        },
        IdForm {
            what: "a Tweede Kamer case number (its votes)",
            example: "2021Z00984",
            sample: Some("2025Z17647"),
        },
        IdForm {
            what: "a Tweede Kamer meeting or its report (tk_debates's `id`)",
            example: "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311",
            sample: None,
        },
        IdForm {
            what: "a Tweede Kamer activity (debate) number",
            example: "2025A04597",
            sample: None,
        },
        IdForm {
            what: "a link to a document, activity or plenary report on tweedekamer.nl",
            example: "www.tweedekamer.nl/kamerstukken/moties/detail?id=2021Z00984&did=2021D02426",
            sample: Some("www.tweedekamer.nl/debat_en_vergadering/commissievergaderingen/details?id=2025A04496"),
        },
    ],
    read,
};

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let debate = |canonical: String| {
        let args = DebateArgs {
            id: canonical.clone(),
            speaker: None,
            party: None,
            activity: None,
            offset: paging.offset,
            length: paging.length,
        };
        Reading::new(canonical, Claim::Home, &super::debate::TOOL, move |ctx, call| {
            Box::pin(debate_read(ctx, call, args))
        })
    };
    Some(Ok(match named(id)? {
        Named::Meeting(g) => debate(meeting_id(&g)),
        Named::Report(g) => debate(format!("verslag:{g}")),
        Named::Activity(n) => debate(n),
        Named::Plenary { year, number } => debate(crate::platforms::tk::TkClient::plenary_page(&year, number.into())),
        Named::Document(document) => {
            let args = TextArgs {
                id: document.as_str().to_owned(),
                offset: paging.offset,
                length: paging.length,
            };
            Reading::new(document.as_str(), Claim::Home, &super::text::TOOL, move |ctx, call| {
                Box::pin(text_read(ctx, call, args))
            })
        }
        Named::Case(number) => {
            let args = VotesArgs {
                id: Some(number.clone()),
                query: None,
                date_from: None,
                date_to: None,
                limit: None,
                offset: None,
            };
            Reading::new(number, Claim::Home, &super::votes::TOOL, move |ctx, call| {
                Box::pin(votes_read(ctx, call, args))
            })
        }
    }))
}
