//! The Tweede Kamer OData API's JSON as Rust types (PLATFORMS.md §3): the records
//! this client reads, the page envelope and the error body.
//!
//! Invariant: every record accepts missing, `null` and unknown fields, and a number
//! where text is expected (the API is not consistent), so a change in the platform's
//! model does not break reading. Field names are the platform's (PascalCase).

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use crate::platforms::http;

/// A parliamentary document (`Document`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Document {
    /// GUID.
    pub id: String,
    /// Kind, e.g. `Motie`, `Brief regering`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// Number, e.g. `2024D39058`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub document_nummer: Option<String>,
    /// Title (usually the dossier's).
    #[serde(deserialize_with = "http::lenient_text")]
    pub titel: Option<String>,
    /// Subject.
    #[serde(deserialize_with = "http::lenient_text")]
    pub onderwerp: Option<String>,
    /// Date (ISO date-time with offset).
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum: Option<String>,
    /// Parliamentary year, e.g. `2024-2025`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub vergaderjaar: Option<String>,
    /// The chamber.
    #[serde(deserialize_with = "http::lenient_text")]
    pub kamer: Option<String>,
    /// Sequence number within its dossier.
    pub volgnummer: Option<i64>,
    /// Last change.
    #[serde(deserialize_with = "http::lenient_text")]
    pub gewijzigd_op: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
    /// The file's type as the metadata says (it can be wrong: PLATFORMS.md §10.5).
    #[serde(deserialize_with = "http::lenient_text", skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

/// A publication of a document version (`DocumentPublicatie`): its KOOP XML rendition
/// when `DocumentType` is `Xml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DocumentPublicatie {
    /// GUID.
    pub id: String,
    /// The rendition's kind, e.g. `Xml`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub document_type: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A case (`Zaak`): a motion, bill, set of questions, ...
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Zaak {
    /// GUID.
    pub id: String,
    /// Number, e.g. `2025Z18657`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub nummer: Option<String>,
    /// Kind, e.g. `Motie`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// Title.
    #[serde(deserialize_with = "http::lenient_text")]
    pub titel: Option<String>,
    /// Subject.
    #[serde(deserialize_with = "http::lenient_text")]
    pub onderwerp: Option<String>,
    /// Start (ISO date-time with offset).
    #[serde(deserialize_with = "http::lenient_text")]
    pub gestart_op: Option<String>,
    /// Status.
    #[serde(deserialize_with = "http::lenient_text")]
    pub status: Option<String>,
    /// Whether it is closed.
    #[serde(deserialize_with = "http::nullable")]
    pub afgedaan: bool,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A decision on an agenda item (`Besluit`): what was decided, and how it was voted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Besluit {
    /// GUID.
    pub id: String,
    /// How it was voted: `Met handopsteken` (show of hands), `Hoofdelijk` (roll call),
    /// `Zonder stemming`; `None` when not voted.
    #[serde(deserialize_with = "http::lenient_text")]
    pub stemmings_soort: Option<String>,
    /// The kind of decision, e.g. `Stemmen - aangenomen`, `Stemmen - verworpen`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub besluit_soort: Option<String>,
    /// The decision as the Kamer writes it, e.g. `Aangenomen.`
    #[serde(deserialize_with = "http::lenient_text")]
    pub besluit_tekst: Option<String>,
    /// A remark.
    #[serde(deserialize_with = "http::lenient_text")]
    pub opmerking: Option<String>,
    /// `Besluit` once final.
    #[serde(deserialize_with = "http::lenient_text")]
    pub status: Option<String>,
    /// Its place among the decisions on the case's agenda item.
    pub agendapunt_zaak_besluit_volgorde: Option<i64>,
    /// Last change.
    #[serde(deserialize_with = "http::lenient_text")]
    pub gewijzigd_op: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// One vote cast on a decision (`Stemming`): a faction's (show of hands) or a member's
/// (roll call, `Persoon_Id` set).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Stemming {
    /// GUID.
    pub id: String,
    /// The decision voted on.
    #[serde(rename = "Besluit_Id", deserialize_with = "http::lenient_text")]
    pub besluit_id: Option<String>,
    /// `Voor`, `Tegen` or `Niet deelgenomen`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// The faction's seats at the vote.
    pub fractie_grootte: Option<i64>,
    /// Who voted: the faction, or the member in a roll call.
    #[serde(deserialize_with = "http::lenient_text")]
    pub actor_naam: Option<String>,
    /// The faction.
    #[serde(deserialize_with = "http::lenient_text")]
    pub actor_fractie: Option<String>,
    /// The vote was cast by mistake (the Kamer recorded it as cast).
    #[serde(deserialize_with = "http::nullable")]
    pub vergissing: bool,
    /// The member, in a roll call.
    #[serde(rename = "Persoon_Id", deserialize_with = "http::lenient_text")]
    pub persoon_id: Option<String>,
    /// The faction's record.
    #[serde(rename = "Fractie_Id", deserialize_with = "http::lenient_text")]
    pub fractie_id: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A case with its decisions (`Zaak?$expand=Besluit`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct ZaakBesluiten {
    /// The case.
    #[serde(flatten)]
    pub zaak: Zaak,
    /// Its decisions.
    #[serde(rename = "Besluit", default, deserialize_with = "http::nullable")]
    pub besluiten: Vec<Besluit>,
}

/// A parliamentary group (`Fractie`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Fractie {
    /// GUID.
    pub id: String,
    /// Abbreviation, e.g. `VVD`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub afkorting: Option<String>,
    /// Dutch name.
    #[serde(rename = "NaamNL", deserialize_with = "http::lenient_text")]
    pub naam_nl: Option<String>,
    /// English name.
    #[serde(rename = "NaamEN", deserialize_with = "http::lenient_text")]
    pub naam_en: Option<String>,
    /// Seats.
    pub aantal_zetels: Option<i64>,
    /// Active since.
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum_actief: Option<String>,
    /// Inactive since (`None` while active).
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum_inactief: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A committee (`Commissie`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "PascalCase", default)]
pub struct Commissie {
    /// GUID.
    pub id: String,
    /// Name.
    #[serde(deserialize_with = "http::lenient_text")]
    pub naam: Option<String>,
    /// Abbreviation.
    #[serde(deserialize_with = "http::lenient_text")]
    pub afkorting: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// One page of an entity set: `value`, `@odata.count` and `@odata.nextLink`.
#[derive(Deserialize)]
pub(super) struct ODataPage<T> {
    pub(super) value: Vec<T>,
    #[serde(rename = "@odata.count", default)]
    pub(super) count: Option<u64>,
    #[serde(rename = "@odata.nextLink", default)]
    pub(super) next_link: Option<String>,
}

/// The body of an OData error: `{"error": {code, message}}`.
#[derive(Deserialize)]
pub(super) struct ODataErrorBody {
    pub(super) error: ODataError,
}

/// The `error` object of an OData error (the code is often empty).
#[derive(Deserialize)]
pub(super) struct ODataError {
    #[serde(default)]
    pub(super) code: Option<String>,
    #[serde(default)]
    pub(super) message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_read_nulls_and_numbers_leniently() {
        let f: Fractie = serde_json::from_str(
            r#"{"Id":"x","NaamNL":"Volt","AantalZetels":2,"DatumInactief":null,"Verwijderd":null}"#,
        )
        .unwrap();
        assert_eq!(
            (f.naam_nl.as_deref(), f.aantal_zetels, f.verwijderd),
            (Some("Volt"), Some(2), false)
        );
        let d: Document = serde_json::from_str(r#"{"Id":"y","Kamer":2,"Nieuw":"veld"}"#).unwrap();
        assert_eq!(d.kamer.as_deref(), Some("2"));
    }
}
