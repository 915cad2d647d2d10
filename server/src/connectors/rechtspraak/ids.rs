//! The ids and links Rechtspraak reads (`fetch`, and `rechtspraak_ruling`'s `id`): an
//! ECLI, and the links to a ruling on uitspraken.rechtspraak.nl and data.rechtspraak.nl.
//! The reader that runs `rechtspraak_ruling` on such an id is beside the connector
//! (`mod.rs`).

use crate::connectors::ids::{link_to, query_value};
use crate::platforms::rechtspraak::Ecli;

/// The ECLI in `id`: itself, or the `id` of a link to the ruling.
pub fn ecli_of(id: &str) -> Option<Ecli> {
    if let Some(ecli) = Ecli::parse(id) {
        return Some(ecli);
    }
    let url = link_to(id, "uitspraken.rechtspraak.nl").or_else(|| link_to(id, "data.rechtspraak.nl"))?;
    query_value(&url, "id").and_then(|v| Ecli::parse(&v))
}
