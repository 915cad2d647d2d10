//! The ids OpenBesluitvorming reads (`fetch`, and `obv_document`'s `id`): its composite
//! entity ids, `type:supplier:orgtype:source:sourceid`
//! (`document:notubiz:gemeente:soest:12345`), of a document, meeting, motion or
//! recording; and the link to a record's page on openbesluitvorming.nl ([`page_url`]). The
//! reader that runs `obv_document` on such an id is beside the connector (`mod.rs`).

use crate::connectors::ids::{link_to, query_value};

/// The public site, whose pages open a record by its id.
const SITE: &str = "https://openbesluitvorming.nl/";

/// The page on openbesluitvorming.nl that opens the record `id`: the address the site
/// itself gives a result (`web/src/App.svelte`, `detailHref`: the search's state and
/// `view`, the entity id), with the record's own source as the search (`organization`,
/// the fourth part of the id: the site opens `view` only beside a search, and a search
/// needs words or a source). `None` for what is not an entity id.
pub fn page_url(id: &str) -> Option<String> {
    if !is_entity_id(id) {
        return None;
    }
    let source = id.split(':').nth(3)?;
    let mut url = reqwest::Url::parse(SITE).ok()?;
    url.query_pairs_mut()
        .append_pair("organization", source)
        .append_pair("view", id);
    Some(url.into())
}

/// The entity id in `id`: itself, or the `view` of a link to the site (or its beta).
pub fn entity_id(id: &str) -> Option<String> {
    let id = id.trim();
    let link = link_to(id, "openbesluitvorming.nl").or_else(|| link_to(id, "beta.openbesluitvorming.nl"));
    let id = match link {
        Some(url) => query_value(&url, "view")?,
        None => id.to_owned(),
    };
    is_entity_id(&id).then_some(id)
}

/// The entity types whose ids `obv_document` reads.
const TYPES: [&str; 4] = ["document", "meeting", "motion", "recording"];

/// True for an entity id: a known type, then at least three more non-empty parts.
pub fn is_entity_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split(':').collect();
    parts.len() >= 4
        && TYPES.contains(&parts[0])
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && !p.contains(char::is_whitespace))
        && id.len() <= 300
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_ids_are_read_and_nothing_else() {
        // The form of OpenBesluitvorming's API documentation (API.md).
        assert!(is_entity_id("document:notubiz:gemeente:soest:12345"));
        assert!(is_entity_id("meeting:ibabs:gemeente:utrecht:abc-1"));
        assert!(!is_entity_id("ECLI:NL:RVS:2015:3394"));
        assert!(!is_entity_id("document:notubiz"));
        assert!(!is_entity_id("kst-36200-VII-5"));
    }

    #[test]
    fn a_records_page_is_the_sites_own_link_and_reads_back_as_its_id() {
        // Real: the Soest council meeting of OpenBesluitvorming's API documentation (API.md).
        let id = "meeting:notubiz:gemeente:soest:830424";
        let page = page_url(id).expect("a page");
        assert_eq!(
            page,
            "https://openbesluitvorming.nl/?organization=soest&view=meeting%3Anotubiz%3Agemeente%3Asoest%3A830424"
        );
        assert_eq!(entity_id(&page).as_deref(), Some(id));
        assert_eq!(
            entity_id("openbesluitvorming.nl/?query=begroting&view=document:notubiz:gemeente:soest:12345").as_deref(),
            Some("document:notubiz:gemeente:soest:12345"),
            "pasted without a scheme, with the search it was shared from"
        );
        assert_eq!(entity_id("https://openbesluitvorming.nl/?query=begroting"), None);
        assert_eq!(page_url("kst-36200-VII-5"), None);
    }
}
