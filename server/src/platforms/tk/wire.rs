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

/// A meeting (`Vergadering`): a plenary sitting or a committee meeting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Vergadering {
    /// GUID.
    pub id: String,
    /// `Plenair` or `Commissie`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// Title: `105e vergadering, donderdag 10 juli 2025`, or a committee debate's subject.
    #[serde(deserialize_with = "http::lenient_text")]
    pub titel: Option<String>,
    /// The room.
    #[serde(deserialize_with = "http::lenient_text")]
    pub zaal: Option<String>,
    /// Parliamentary year, e.g. `2024-2025`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub vergaderjaar: Option<String>,
    /// The meeting's number in the year.
    pub vergadering_nummer: Option<i64>,
    /// Its day (ISO date-time with offset).
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum: Option<String>,
    /// When it opened.
    #[serde(deserialize_with = "http::lenient_text")]
    pub aanvangstijd: Option<String>,
    /// When it closed.
    #[serde(deserialize_with = "http::lenient_text")]
    pub sluiting: Option<String>,
    /// Last change.
    #[serde(deserialize_with = "http::lenient_text")]
    pub gewijzigd_op: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A meeting's report (`Verslag`): its resource is the VLOS XML file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Verslag {
    /// GUID.
    pub id: String,
    /// `Voorpublicatie`, `Tussenpublicatie`, `Eindpublicatie`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// `Casco`, `Ongecorrigeerd`, `Gecorrigeerd`, `Gerectificeerd`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub status: Option<String>,
    /// The meeting.
    #[serde(rename = "Vergadering_Id", deserialize_with = "http::lenient_text")]
    pub vergadering_id: Option<String>,
    /// The resource's type.
    #[serde(deserialize_with = "http::lenient_text")]
    pub content_type: Option<String>,
    /// The resource's size.
    pub content_length: Option<i64>,
    /// Last change: a corrected version has a later one.
    #[serde(deserialize_with = "http::lenient_text")]
    pub gewijzigd_op: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A meeting with its reports (`Vergadering?$expand=Verslag`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct VergaderingVerslagen {
    /// The meeting.
    #[serde(flatten)]
    pub vergadering: Vergadering,
    /// Its reports.
    #[serde(rename = "Verslag", default, deserialize_with = "http::nullable")]
    pub verslagen: Vec<Verslag>,
}

/// A report with its meeting (`Verslag?$expand=Vergadering`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct VerslagVergadering {
    /// The report.
    #[serde(flatten)]
    pub verslag: Verslag,
    /// Its meeting.
    #[serde(rename = "Vergadering", default)]
    pub vergadering: Option<Vergadering>,
}

/// An activity (`Activiteit`): a debate, a committee meeting's item, the votes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Activiteit {
    /// GUID.
    pub id: String,
    /// Number, e.g. `2025A04597`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub nummer: Option<String>,
    /// Kind, e.g. `Plenair debat`, `Commissiedebat`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// Subject.
    #[serde(deserialize_with = "http::lenient_text")]
    pub onderwerp: Option<String>,
    /// Its day (ISO date-time with offset).
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum: Option<String>,
    /// When it started.
    #[serde(deserialize_with = "http::lenient_text")]
    pub aanvangstijd: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A person (`Persoon`): a member, former member or other.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Persoon {
    /// GUID.
    pub id: String,
    /// Surname without its prefix: `Dijk`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub achternaam: Option<String>,
    /// The surname's prefix: `van`, `van der`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub tussenvoegsel: Option<String>,
    /// The name used: `Olger`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub roepnaam: Option<String>,
    /// Initials.
    #[serde(deserialize_with = "http::lenient_text")]
    pub initialen: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
}

/// A faction's seat (`FractieZetel`) with its faction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FractieZetel {
    /// GUID.
    pub id: String,
    /// The faction (`$expand=Fractie`).
    #[serde(rename = "Fractie")]
    pub fractie: Option<Fractie>,
}

/// A member in a faction's seat over a time (`FractieZetelPersoon`), with the person and
/// the seat (`$expand=Persoon,FractieZetel($expand=Fractie)`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FractieZetelPersoon {
    /// GUID.
    pub id: String,
    /// `Lid`, `Fractievoorzitter`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub functie: Option<String>,
    /// From.
    #[serde(deserialize_with = "http::lenient_text")]
    pub van: Option<String>,
    /// Until (inclusive; `None` while seated).
    #[serde(deserialize_with = "http::lenient_text")]
    pub tot_en_met: Option<String>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
    /// The member.
    #[serde(rename = "Persoon")]
    pub persoon: Option<Persoon>,
    /// The seat and its faction.
    #[serde(rename = "FractieZetel")]
    pub fractie_zetel: Option<FractieZetel>,
}

/// A dossier (`Kamerstukdossier`): `36284`, or `21501` with `Toevoeging` `20`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Kamerstukdossier {
    /// GUID.
    pub id: String,
    /// Its number.
    pub nummer: Option<i64>,
    /// Its addition (`VII`, `20`).
    #[serde(deserialize_with = "http::lenient_text")]
    pub toevoeging: Option<String>,
}

/// A motion's case with its dossiers (`Zaak?$expand=Kamerstukdossier`): `Volgnummer` is
/// its number in the dossier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ZaakDossiers {
    /// GUID.
    pub id: String,
    /// Number, e.g. `2025Z13451` (what tk_votes reads).
    #[serde(deserialize_with = "http::lenient_text")]
    pub nummer: Option<String>,
    /// Kind, e.g. `Motie`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub soort: Option<String>,
    /// Its number in its dossier.
    pub volgnummer: Option<i64>,
    /// Marked deleted by the platform.
    #[serde(deserialize_with = "http::nullable")]
    pub verwijderd: bool,
    /// Its dossiers.
    #[serde(rename = "Kamerstukdossier", deserialize_with = "http::nullable")]
    pub dossiers: Vec<Kamerstukdossier>,
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
