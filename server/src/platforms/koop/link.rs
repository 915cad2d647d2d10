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

/// How a collection's file links are checked: the folder its files lie under and the
/// words of each refusal.
#[derive(Debug)]
pub struct FileLink {
    /// `/bwb/`, `/cvdr/`.
    pub dir: &'static str,
    /// The link is not a URL.
    pub not_a_url: &'static str,
    /// The link is on another host.
    pub elsewhere: &'static str,
    /// The link is on the right host but not one of the collection's files.
    pub not_a_file: &'static str,
}

/// A file link a record gives, accepted only on the search host (`base`) or KOOP's
/// repository host, under `link.dir` and ending `.xml`, without credentials, query or
/// fragment.
pub fn file_url(platform: PlatformId, base: &Url, url: &str, link: &FileLink) -> Result<Url, PlatformError> {
    let refuse = |detail: &str| PlatformError::ForeignLink {
        platform,
        detail: detail.to_owned(),
    };
    let parsed = Url::parse(url).map_err(|_| refuse(link.not_a_url))?;
    let on_base = parsed.scheme() == base.scheme()
        && parsed.host_str() == base.host_str()
        && parsed.port_or_known_default() == base.port_or_known_default();
    let on_repository = parsed.scheme() == "https" && parsed.host_str() == Some(REPOSITORY_HOST);
    if !(on_base || on_repository) {
        return Err(refuse(link.elsewhere));
    }
    if !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.query().is_some()
        || parsed.fragment().is_some()
        || !(parsed.path().contains(link.dir) && parsed.path().ends_with(".xml"))
    {
        return Err(refuse(link.not_a_file));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: FileLink = FileLink {
        dir: "/bwb/",
        not_a_url: "not a URL",
        elsewhere: "elsewhere",
        not_a_file: "not a file",
    };

    #[test]
    fn only_the_collections_files_on_its_hosts_are_followed() {
        let base = Url::parse("http://127.0.0.1:9/sru/Search").unwrap();
        let ok = |u: &str| file_url(crate::platforms::bwb::PLATFORM, &base, u, &LINK).map(|u| u.to_string());
        assert!(ok("http://127.0.0.1:9/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml").is_ok());
        assert!(ok(&format!("https://{REPOSITORY_HOST}/bwb/BWBR0005537/x.xml")).is_ok());
        for (bad, why) in [
            ("no url", "not a URL"),
            ("https://example.org/bwb/x.xml", "elsewhere"),
            (&format!("http://{REPOSITORY_HOST}/bwb/x.xml"), "elsewhere"),
            ("http://127.0.0.1:10/bwb/x.xml", "elsewhere"),
            ("http://127.0.0.1:9/cvdr/x.xml", "not a file"),
            ("http://127.0.0.1:9/bwb/x.xml?a=b", "not a file"),
            ("http://u:p@127.0.0.1:9/bwb/x.xml", "not a file"),
            ("http://127.0.0.1:9/bwb/x.pdf", "not a file"),
        ] {
            let e = ok(bad).unwrap_err();
            assert!(
                matches!(&e, PlatformError::ForeignLink { detail, .. } if detail == why),
                "{bad}: {e:?}"
            );
        }
    }
}
