//! What the Rechtspraak tools keep and show: typed answers and pure render functions,
//! snapshot-tested beside each.
//!
//! Its rooms, one per answer: a search (`search.rs`), a ruling (`ruling.rs`) and the value
//! lists of courts, areas and procedures (`lists.rs`). This file holds what they share: the
//! limits, a ruling's public page and list title, a text cut short, and structured content
//! of a value of its own; the rooms use it, and it only re-exports them.

use serde::Serialize;

use crate::call::Structure;

mod lists;
mod ruling;
mod search;

pub use lists::{
    AreaEntry, AreaShown, AreasAnswer, AreasOutput, CourtShown, CourtsAnswer, CourtsOutput, ListPage, ProceduresAnswer,
    ProceduresOutput, areas, courts, procedures,
};
pub use ruling::{ReferenceShown, RelationShown, RulingOutput, head, ruling};
pub use search::{Found, Hit, SearchOutput, SearchPage, search};

/// Characters of an inhoudsindicatie shown in a search hit.
pub const SUMMARY_CHARS: usize = 300;
/// Entries of a value list per answer by default, and at most.
pub const DEFAULT_LIST_LIMIT: usize = 40;
pub const MAX_LIST_LIMIT: usize = 200;

/// The public page of a ruling.
pub fn ruling_url(ecli: &str) -> String {
    format!("https://uitspraken.rechtspraak.nl/details?id={ecli}")
}

/// A ruling's title for a list: the start of its inhoudsindicatie, else its court and
/// case number.
fn ruling_title(summary: Option<&str>, court: &str, case_number: Option<&str>) -> String {
    match summary.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => trim_chars(s, 120),
        None => match case_number {
            Some(n) => format!("{court}, {n}"),
            None => court.to_owned(),
        },
    }
}

/// Structured content of its own, from a value the output schema describes.
fn own<T: Serialize>(value: &T) -> Structure {
    // These are plain structs of strings and numbers: serializing them cannot fail.
    Structure::Own(serde_json::to_value(value).unwrap_or_default())
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn trim_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod test_support {
    use crate::call::{Rendered, Structure};

    /// Checks `r`'s text and structured content against the snapshot `name`.
    pub(super) fn snapshot(name: &str, r: &Rendered) {
        let structured = match &r.structured {
            Structure::Own(v) => v.clone(),
            Structure::Answer(_) => panic!("own structure"),
        };
        let text = format!(
            "{}\n---\n{}",
            r.text,
            serde_json::to_string_pretty(&structured).expect("json")
        );
        insta::with_settings!({snapshot_path => "../../../../../snapshots/render", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, text);
        });
    }
}
