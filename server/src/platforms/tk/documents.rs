//! A Kamer document through the client: the searches of documents, one document by its
//! GUID or its number with its addresses, its file, and its KOOP XML rendition.
//!
//! Invariants: a document is asked only by a GUID or a number as the Kamer writes it
//! (anything else is refused before sending); a file's `Content-Type` is passed on as
//! claimed, never trusted. What it does not do: read a file's text (`crate::text`).

use reqwest::Url;

use super::super::http::{self, Asked, PlatformError};
use super::pages::{Continuation, TkPage, TkSearch};
use super::wire::{Document, DocumentPublicatie};
use super::{EntitySet, PLATFORM, TkClient, TkError, TkFile, is_document_number, is_guid, quote_literal, refused};

/// Where a document lives on the platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentLinks {
    /// The record: `{base}/Document({id})`.
    pub record_url: String,
    /// The file (PDF or DOC(X)): `{base}/Document({id})/resource`.
    pub resource_url: String,
}

/// A document with its links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TkDocument {
    /// The record.
    pub document: Document,
    /// Its addresses.
    pub links: DocumentLinks,
}

impl TkClient {
    /// The first page of documents matching `search`, newest first.
    pub async fn search_documents(&self, search: &TkSearch) -> Result<TkPage<Document>, TkError> {
        self.search::<Document>(search).await
    }

    /// The page of documents a continuation from [`TkClient::search_documents`] points at.
    pub async fn next_documents(&self, next: &Continuation) -> Result<TkPage<Document>, TkError> {
        self.next::<Document>(next).await
    }

    /// One document by its GUID, with its record and file addresses.
    pub async fn document(&self, id: &str) -> Result<TkDocument, TkError> {
        let links = self.document_links(id)?;
        let url = Url::parse(&links.record_url).map_err(|e| PlatformError::Config {
            platform: PLATFORM,
            detail: format!("cannot form a record URL: {e}"),
        })?;
        let fetched = self.http.get(url).await?;
        let what = format!("document {}", http::brief(id));
        let document = self.decode::<Document>(&fetched, Asked::Record(&what))?;
        Ok(TkDocument { document, links })
    }

    /// The document numbered `number` (e.g. `2021D02426`, not deleted) with its links:
    /// the number people and tk_search list first, read through the `Document` set.
    pub async fn document_by_number(&self, number: &str) -> Result<TkDocument, TkError> {
        if !is_document_number(number) {
            return Err(refused(
                "invalid_document_number",
                format!(
                    "`{}` is not a document number (such as 2021D02426)",
                    http::brief(number)
                ),
            ));
        }
        let filter = format!("DocumentNummer eq {} and Verwijderd eq false", quote_literal(number));
        let document: Document = self
            .first_where(&filter, None, || format!("document numbered {number}"))
            .await?;
        let links = self.document_links(&document.id.to_ascii_lowercase())?;
        Ok(TkDocument { document, links })
    }

    /// The addresses of a document, without asking the platform.
    pub fn document_links(&self, id: &str) -> Result<DocumentLinks, TkError> {
        if !is_guid(id) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_guid".to_owned(),
                message: format!("`{}` is not a document id (a GUID such as 7a9b77f1-…)", http::brief(id)),
            });
        }
        let record = http::join(PLATFORM, &self.base, &format!("Document({id})"))?;
        Ok(DocumentLinks {
            resource_url: format!("{record}/resource"),
            record_url: record.into(),
        })
    }

    /// The document's file: `/Document({id})/resource` (PDF, Word, RTF or XML; the
    /// `Content-Type` can be wrong, so the caller sniffs the bytes).
    pub async fn document_file(&self, id: &str) -> Result<TkFile, TkError> {
        let links = self.document_links(id)?;
        self.file(&links.resource_url, &format!("file of document {id}")).await
    }

    /// The id of the document's KOOP XML rendition, if it has one (PLATFORMS.md §10.5):
    /// `DocumentPublicatie` not deleted, `DocumentType eq 'Xml'`, of the version of the
    /// document numbered `number`.
    pub async fn xml_rendition(&self, number: &str) -> Result<Option<String>, TkError> {
        let mut url = http::join(PLATFORM, &self.base, DocumentPublicatie::SET)?;
        url.query_pairs_mut().append_pair(
            "$filter",
            &format!(
                "Verwijderd eq false and DocumentType eq 'Xml' and DocumentVersie/Document/Nummer eq {}",
                quote_literal(number)
            ),
        );
        let (page, _) = self.page_with_link::<DocumentPublicatie>(url).await?;
        Ok(page
            .items
            .into_iter()
            .find(|p| !p.verwijderd && is_guid(&p.id.to_ascii_lowercase()))
            .map(|p| p.id.to_ascii_lowercase()))
    }

    /// The rendition's file: `/DocumentPublicatie({id})/resource`.
    pub async fn rendition_file(&self, id: &str) -> Result<TkFile, TkError> {
        if !is_guid(id) {
            return Err(PlatformError::Garbage {
                platform: PLATFORM,
                detail: "a DocumentPublicatie id is not a GUID".into(),
            });
        }
        let url = http::join(PLATFORM, &self.base, &format!("DocumentPublicatie({id})/resource"))?;
        self.file(url.as_str(), &format!("XML rendition {id}")).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::client;
    use super::*;

    #[test]
    fn document_links_need_a_guid() {
        let c = client();
        let links = c.document_links("7a9b77f1-0000-4000-8000-000000000001").unwrap();
        assert_eq!(
            links.resource_url,
            "http://127.0.0.1:9/OData/v4/2.0/Document(7a9b77f1-0000-4000-8000-000000000001)/resource"
        );
        assert!(
            matches!(c.document_links("2024D39058"), Err(PlatformError::BadRequest { code, .. }) if code == "invalid_guid")
        );
    }
}
