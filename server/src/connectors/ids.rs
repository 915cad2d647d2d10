//! What a connector reads by id: the identifiers and links people and tools have, each
//! connector declaring its own forms ([`IdReader`], a field of its `ConnectorSpec`) in its
//! own module — `fetch` on `/mcp` asks every connector served, and each connector's reading
//! tools read the same forms (`tk_document` a document number, `cvdr_read` a link to
//! lokaleregelgeving.overheid.nl).
//!
//! A recognised id is a [`Reading`]: the id in its connector's canonical form, how sure the
//! connector is that the id is its own ([`Claim`]: where a bare id fits several platforms,
//! the strongest claim reads it — the table is in docs/tools.md, "Ids and links `fetch`
//! reads"), and the call of the connector's reading tool with typed arguments, through the
//! tool's spec (its name), never by a name written out nor through JSON.
//!
//! `platform:id` (`opentk:2016D00001`) always names the platform; the prefix is read here,
//! once ([`split_platform`]).
//!
//! What this module does not do: run a reading (the MCP layer runs it through the call
//! stack), or know any connector (shared code names none).

use besluitbron_core::PlatformId;
use reqwest::Url;

use super::tool::{ReadFuture, ToolSpec};
use crate::call::{Call, Context};

/// One form of id or link a connector reads, as the error listing the forms and the
/// docs/tools.md show it.
#[derive(Debug)]
pub struct IdForm {
    /// What it is, in a few words (`an ECLI`, `a link to wetten.overheid.nl`).
    pub what: &'static str,
    /// An example taken from the platform (a real id or link).
    pub example: &'static str,
    /// An id of this form the platform's fake serves, where the example is none (the
    /// id-form walk of `fetch` in the tests reads it; `None`: the example is served).
    pub sample: Option<&'static str>,
}

/// What a connector reads by id.
pub struct IdReader {
    /// Its forms, the bare ids first, then links.
    pub forms: &'static [IdForm],
    /// Whether every record it reads has a public page, which `fetch` answers as `url`
    /// (the id-form walk in the tests holds each such platform to it).
    pub public_pages: bool,
    /// The reading tools it runs with `fetch`'s `offset` and `length` as they are given
    /// (any other argument of theirs left unset): a tool here whose every argument
    /// `fetch` takes is read through `fetch` at `/mcp`, which lists `fetch` instead.
    pub paged: &'static [&'static ToolSpec],
    /// Recognises an id or link (trimmed, without a `platform:` prefix) with the paging
    /// asked: its reading, or why a form of this connector does not fit (`Err`, e.g. an
    /// ECLI with a bad court code), or `None` when it is none of this connector's forms.
    pub read: fn(&str, Paging) -> Option<Result<Reading, String>>,
}

impl std::fmt::Debug for IdReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "id reader of {} forms", self.forms.len())
    }
}

/// Where in a long text to read: `fetch`'s `offset` and `length`, passed to reading
/// tools that page their text (each tool's default where not given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// The first character.
    pub offset: Option<usize>,
    /// How many characters.
    pub length: Option<usize>,
}

/// How sure a connector is that a bare id is its own: where several connectors
/// recognise one id, the strongest claim reads it; a `platform:` prefix decides alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Claim {
    /// Another platform is where this id is at home; this one has a copy (OpenTK's copy
    /// of a Tweede Kamer document).
    Copy,
    /// The platform that issues this id, or the only one that reads it.
    Home,
}

/// A running reading tool.
pub type ReadingRun = Box<dyn for<'a> FnOnce(&'a Context, &'a Call) -> ReadFuture<'a> + Send>;

/// An id recognised by a connector: what reads it and how.
pub struct Reading {
    /// The id in the connector's canonical form (`ECLI:NL:RVS:2015:3394`, `BWBR0018451`).
    pub id: String,
    /// How sure the connector is.
    pub claim: Claim,
    /// The reading tool (its spec: its name is the call's tool).
    pub tool: &'static ToolSpec,
    /// The tool's function with its typed arguments, answering typed.
    pub run: ReadingRun,
}

impl Reading {
    /// `tool` reads `id` by running `run` (the tool's own function, typed arguments
    /// given), with `claim`.
    pub fn new(
        id: impl Into<String>,
        claim: Claim,
        tool: &'static ToolSpec,
        run: impl for<'a> FnOnce(&'a Context, &'a Call) -> ReadFuture<'a> + Send + 'static,
    ) -> Reading {
        Reading {
            id: id.into(),
            claim,
            tool,
            run: Box::new(run),
        }
    }
}

impl std::fmt::Debug for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} reads {} ({:?})", self.tool.name, self.id, self.claim)
    }
}

/// `id` split into the platform it names (`opentk:2016D00001`) and the rest, when it
/// starts with a platform's id and a colon; otherwise `None`. An ECLI (`ECLI:NL:…`) or an
/// OpenBesluitvorming id (`document:…`) names no platform: their first part is no
/// platform's id.
pub fn split_platform<'a>(id: &'a str, platforms: &[PlatformId]) -> Option<(PlatformId, &'a str)> {
    let (head, rest) = id.split_once(':')?;
    let platform = platforms.iter().copied().find(|p| p.as_str() == head)?;
    Some((platform, rest.trim()))
}

/// `id` without its own platform's prefix (`tk:2016D00001` → `2016D00001` for `tk`): a
/// reading tool reads the ids `fetch` and `search` give.
pub fn own(platform: PlatformId, id: &str) -> &str {
    let id = id.trim();
    match id.split_once(':') {
        Some((head, rest)) if head == platform.as_str() => rest.trim(),
        _ => id,
    }
}

/// `id` as a link (`http` or `https`) whose host is `host` or `www.` + `host`; a link
/// pasted without its scheme (`wetten.overheid.nl/BWBR0018451`) is read as `https`.
pub fn link_to(id: &str, host: &str) -> Option<Url> {
    let id = id.trim();
    let bare = id.strip_prefix("www.").unwrap_or(id);
    let url = if bare.starts_with(host) && bare[host.len()..].starts_with(['/', '?']) {
        Url::parse(&format!("https://{id}")).ok()?
    } else {
        Url::parse(id).ok()?
    };
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let h = url.host_str()?.to_ascii_lowercase();
    (h == host || h.strip_prefix("www.") == Some(host)).then_some(url)
}

/// The value of the query parameter `name` of `url` (its first).
pub fn query_value(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The path segments of `url`, percent-decoded, empty ones left out.
pub fn segments(url: &Url) -> Vec<String> {
    url.path_segments()
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect()
}

/// The forms of `readers` by their examples, for an error that lists what is read
/// (short: a tool error holds 1,000 characters; what each is, the tools' descriptions
/// and docs/tools.md say).
pub fn list_forms<'a>(readers: impl IntoIterator<Item = (PlatformId, &'a IdReader)>) -> String {
    let mut lines = Vec::new();
    for (platform, reader) in readers {
        for form in reader.forms {
            lines.push(format!("`{}` ({})", form.example, platform.as_str()));
        }
    }
    lines.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_platform_prefix_is_read_only_for_a_platform() {
        assert_eq!(
            split_platform("opentk:2016D00001", &crate::connectors::platforms()),
            Some((crate::platforms::opentk::PLATFORM, "2016D00001"))
        );
        assert_eq!(
            split_platform(
                "tk: 0f5b2c6e-0000-4000-8000-000000000001",
                &crate::connectors::platforms()
            )
            .map(|(p, _)| p),
            Some(crate::platforms::tk::PLATFORM)
        );
        assert_eq!(
            split_platform("ECLI:NL:RVS:2015:3394", &crate::connectors::platforms()),
            None
        );
        assert_eq!(
            split_platform("document:notubiz:gemeente:soest:12345", &crate::connectors::platforms()),
            None
        );
        assert_eq!(
            split_platform(
                "https://wetten.overheid.nl/BWBR0018451",
                &crate::connectors::platforms()
            ),
            None
        );
        assert_eq!(own(crate::platforms::bwb::PLATFORM, " bwb:BWBR0018451 "), "BWBR0018451");
        assert_eq!(
            own(crate::platforms::bwb::PLATFORM, "cvdr:CVDR123"),
            "cvdr:CVDR123",
            "another's prefix stays"
        );
    }

    #[test]
    fn links_are_read_by_host_with_or_without_www() {
        let url = link_to(
            "https://www.tweedekamer.nl/kamerstukken/moties/detail?id=2016Z00001&did=2016D00001",
            "tweedekamer.nl",
        )
        .expect("a link to the Kamer");
        assert_eq!(query_value(&url, "did").as_deref(), Some("2016D00001"));
        assert_eq!(segments(&url), ["kamerstukken", "moties", "detail"]);
        assert!(link_to("https://example.org/tweedekamer.nl", "tweedekamer.nl").is_none());
        assert!(link_to("ftp://tweedekamer.nl/x", "tweedekamer.nl").is_none());
        assert!(link_to("2016D00001", "tweedekamer.nl").is_none());
        let pasted = link_to("wetten.overheid.nl/BWBR0018451/2025-06-01", "wetten.overheid.nl").expect("no scheme");
        assert_eq!(segments(&pasted), ["BWBR0018451", "2025-06-01"]);
        assert!(link_to("wetten.overheid.nl.example.org/x", "wetten.overheid.nl").is_none());
    }
}
