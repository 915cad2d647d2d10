//! What the page's handlers and its HTML both use: the language of the labels, one
//! platform's part of a search result, and the bounds of the search form.
//!
//! What this module does not do: render (`html.rs`) or answer a request (`mod.rs`).

use std::collections::HashMap;

use crate::connectors::page_spec::Hits;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 200;

/// The longest organisation filter, in characters.
pub const MAX_ORGANISATION_CHARS: usize = 100;

/// The language of the labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// Dutch, the default.
    Nl,
    /// English (`?lang=en`).
    En,
}

impl Lang {
    pub(super) fn of(params: &HashMap<String, String>) -> Lang {
        match params.get("lang").map(String::as_str) {
            Some("en") => Lang::En,
            _ => Lang::Nl,
        }
    }
}

/// One platform's part of a search result.
#[derive(Debug)]
pub enum Group {
    /// Its hits.
    Done(Hits),
    /// Its failure, said.
    Failed(String),
    /// Not answered within the deadline.
    Pending,
    /// It has no keyword search; why.
    Without(&'static str),
}
