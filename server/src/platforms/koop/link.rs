//! The file links KOOP's records give (a toestand's `locatie_toestand`, a regulation's
//! `publicatieurl_xml`), checked once for every collection ([`file_url`]).
//!
//! Invariant: a link is followed only on the search service's own host (as configured,
//! so a fake on loopback serves its files too) or on KOOP's repository host over https,
//! under the collection's folder, ending `.xml`, without credentials, query or fragment:
//! a record can never send BesluitBron elsewhere.

use besluitbron_core::PlatformId;
use reqwest::Url;

use crate::platforms::http::PlatformError;

/// KOOP's repository host, where toestanden and regulations' XML live.
pub const REPOSITORY_HOST: &str = "repository.officiele-overheidspublicaties.nl";

/// How a collection's file links are checked: the folder its files lie under, and the
/// names each refusal gives the file and the collection.
#[derive(Debug)]
pub struct FileLink {
    /// `/bwb/`, `/cvdr/`.
    pub dir: &'static str,
    /// What the linked file is, as a refusal names it: `toestand`, `regulation`.
    pub file: &'static str,
    /// The collection, as a refusal names it: `BWB`, `CVDR`.
    pub collection: &'static str,
}

impl FileLink {
    /// The links of the collection whose files lie under `dir`.
    pub const fn new(dir: &'static str, file: &'static str, collection: &'static str) -> Self {
        Self { dir, file, collection }
    }
}

/// A file link a record gives, accepted only on the search host (`base`) or KOOP's
/// repository host, under `link.dir` and ending `.xml`, without credentials, query or
/// fragment.
pub fn file_url(platform: PlatformId, base: &Url, url: &str, link: &FileLink) -> Result<Url, PlatformError> {
    let refuse = |detail: String| PlatformError::ForeignLink { platform, detail };
    let file = link.file;
    let parsed = Url::parse(url).map_err(|_| refuse(format!("the {file}'s location is not a URL")))?;
    let on_base = parsed.scheme() == base.scheme()
        && parsed.host_str() == base.host_str()
        && parsed.port_or_known_default() == base.port_or_known_default();
    let on_repository = parsed.scheme() == "https" && parsed.host_str() == Some(REPOSITORY_HOST);
    if !(on_base || on_repository) {
        return Err(refuse(format!("the {file} lies on another host")));
    }
    if !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.query().is_some()
        || parsed.fragment().is_some()
        || !(parsed.path().contains(link.dir) && parsed.path().ends_with(".xml"))
    {
        return Err(refuse(format!(
            "the {file}'s location is not a {} file",
            link.collection
        )));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: FileLink = FileLink::new("/bwb/", "toestand", "BWB");

    #[test]
    fn only_the_collections_files_on_its_hosts_are_followed() {
        let base = Url::parse("http://127.0.0.1:9/sru/Search").unwrap();
        let ok = |u: &str| file_url(crate::platforms::bwb::PLATFORM, &base, u, &LINK).map(|u| u.to_string());
        assert!(ok("http://127.0.0.1:9/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml").is_ok());
        assert!(ok(&format!("https://{REPOSITORY_HOST}/bwb/BWBR0005537/x.xml")).is_ok());
        for (bad, why) in [
            ("no url", "the toestand's location is not a URL"),
            ("https://example.org/bwb/x.xml", "the toestand lies on another host"),
            (
                &format!("http://{REPOSITORY_HOST}/bwb/x.xml"),
                "the toestand lies on another host",
            ),
            ("http://127.0.0.1:10/bwb/x.xml", "the toestand lies on another host"),
            (
                "http://127.0.0.1:9/cvdr/x.xml",
                "the toestand's location is not a BWB file",
            ),
            (
                "http://127.0.0.1:9/bwb/x.xml?a=b",
                "the toestand's location is not a BWB file",
            ),
            (
                "http://u:p@127.0.0.1:9/bwb/x.xml",
                "the toestand's location is not a BWB file",
            ),
            (
                "http://127.0.0.1:9/bwb/x.pdf",
                "the toestand's location is not a BWB file",
            ),
        ] {
            let e = ok(bad).unwrap_err();
            assert!(
                matches!(&e, PlatformError::ForeignLink { detail, .. } if detail == why),
                "{bad}: {e:?}"
            );
        }
    }
}
