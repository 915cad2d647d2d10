//! A publication of the Officiële Bekendmakingen fake ([`crate::ob_corpus`] makes them, and
//! [`crate::ob_chamber`] its parliamentary items): its record, its renditions, and the real
//! files it is served from.

use crate::real;

/// Which renditions a publication has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renditions {
    /// XML, HTML and PDF.
    Full,
    /// Only a PDF (older items, attachments).
    PdfOnly,
    /// XML (an empty template: metadata, no text), HTML and PDF.
    EmptyTemplate,
    /// A real publication of the corpus: its XML rendition, and its `metadata` and
    /// `metadataowms` files where the corpus has them, each served as the file is.
    Real,
    /// A real parliamentary item of `corpus/ob-chamber/`: its record only, and its
    /// `metadataowms` file where the corpus has one (no text: the corpus holds none).
    RealRecord,
}

/// One publication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObPublication {
    /// `dcterms:identifier`, e.g. `gmb-2026-10004`.
    pub identifier: String,
    /// The identifier's prefix (`gmb`, `stcrt`, `kst`, …): the `{type}` of its URLs.
    pub kind: &'static str,
    /// The `{group}` of its URLs: the year, the dossier or the session year.
    pub group: String,
    /// `dcterms:title`.
    pub title: String,
    /// `dcterms:type`.
    pub document_type: Option<String>,
    /// `dcterms:creator`.
    pub creator: Option<String>,
    /// `tpmeta/organisatietype`.
    pub organization_type: Option<String>,
    /// `tpmeta/publicatienaam`.
    pub publication: &'static str,
    /// `tpmeta/publicatienummer`.
    pub number: Option<String>,
    /// `tpmeta/jaargang`.
    pub volume: Option<i64>,
    /// `tpmeta/dossiernummer` (parliamentary papers).
    pub dossier: Option<String>,
    /// `tpmeta/ondernummer`.
    pub subnumber: Option<String>,
    /// `dcterms:date` (dagtekening), `YYYY-MM-DD`.
    pub date: Option<String>,
    /// `dcterms:available` (publicatiedatum), `YYYY-MM-DD`.
    pub available: Option<String>,
    /// `dcterms:subject`.
    pub subjects: Vec<String>,
    /// The body's paragraphs (empty for an empty template; a real publication's whole
    /// text as one, for searching it).
    pub paragraphs: Vec<String>,
    /// Its renditions.
    pub renditions: Renditions,
}

impl ObPublication {
    /// The path of rendition `manifestation` under the fake's root:
    /// `/frbr/officielepublicaties/{type}/{group}/{id}/1/{manifestation}/{file}`, the file
    /// `{id}.{ext}`, or `metadata.xml` and `metadata_owms.xml` as the repository names them.
    pub fn rendition_path(&self, manifestation: &str) -> String {
        let file = match manifestation {
            "metadata" => "metadata.xml".to_owned(),
            "metadataowms" => "metadata_owms.xml".to_owned(),
            ext => format!("{}.{ext}", self.identifier),
        };
        format!(
            "/frbr/officielepublicaties/{}/{}/{}/1/{manifestation}/{file}",
            self.kind, self.group, self.identifier
        )
    }

    /// The manifestations it has, in the order the record lists them.
    pub fn manifestations(&self) -> &'static [&'static str] {
        match self.renditions {
            Renditions::PdfOnly => &["pdf"],
            Renditions::Full | Renditions::EmptyTemplate => &["html", "pdf", "xml"],
            Renditions::Real if self.real_file("metadata").is_some() => &["metadata", "metadataowms", "xml"],
            Renditions::Real => &["xml"],
            Renditions::RealRecord if self.real_file("metadataowms").is_some() => &["metadataowms"],
            Renditions::RealRecord => &[],
        }
    }

    /// The text a reader should get from a generated XML rendition: the paragraphs, a
    /// blank line between them (`None` for an empty template, a PDF-only item or a real
    /// publication, whose text is its file's).
    pub fn expected_text(&self) -> Option<String> {
        (self.renditions == Renditions::Full).then(|| self.paragraphs.join("\n\n"))
    }

    /// A real publication's file of `manifestation` (`xml`, `metadata`, `metadataowms`),
    /// byte for byte; `None` for a generated one or a file the corpus lacks.
    pub fn real_file(&self, manifestation: &str) -> Option<&'static [u8]> {
        if self.renditions == Renditions::RealRecord {
            return (manifestation == "metadataowms")
                .then(|| owms_file(&self.identifier))
                .flatten();
        }
        if self.renditions != Renditions::Real {
            return None;
        }
        let stem = match manifestation {
            "xml" => self.identifier.clone(),
            "metadata" => format!("{}.metadata", self.identifier),
            "metadataowms" => format!("{}.metadata_owms", self.identifier),
            _ => return None,
        };
        real::ob().iter().find(|f| f.stem() == stem).map(|f| f.bytes)
    }
}

/// The `metadata_owms` file of the item `identifier`, byte for byte.
pub fn owms_file(identifier: &str) -> Option<&'static [u8]> {
    real::ob_chamber()
        .iter()
        .filter(|f| f.stem().contains("metadata_owms"))
        .find(|f| {
            real::parse(f.bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", f.path))
                .find("identifier")
                .is_some_and(|e| e.text_without(&[], "") == identifier)
        })
        .map(|f| f.bytes)
}
