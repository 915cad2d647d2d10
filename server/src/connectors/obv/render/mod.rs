//! What OpenBesluitvorming's tools keep and show: the typed answers stored in the buffer,
//! and pure functions from an answer (and the tool's arguments) to text and structured
//! content, snapshot-tested beside each.
//!
//! Its rooms, one per answer: a search (`search.rs`), a document (`document.rs`), the
//! sources (`sources.rs`) and their load status (`status.rs`). This file only names them.

mod document;
mod search;
mod sources;
mod status;

pub use document::{
    AgendaDocumentEntry, AgendaEntry, DocumentAnswer, DocumentShown, MotionEntry, MotionSummary, document, head,
};
pub use search::{Found, Hit, SearchAnswer, SearchShown, Searched, candidates, listing, search};
pub use sources::{SourceEntry, SourceShown, SourcesAnswer, SourcesFilter, SourcesShown, sources};
pub use status::{
    SourceStatusEntry, SourceStatusShown, StatusAnswer, StatusFilter, StatusShown, SupplierEntry, status,
};
