//! The ids and links Officiële Bekendmakingen reads (`fetch`, and `ob_document`'s `id`):
//! a publication's identifier (`stb-2018-84`, `kst-36200-VII-5`, `gmb-2026-104512`,
//! `h-tk-20242025-42-4`, …), its page on zoek.officielebekendmakingen.nl (`.html`,
//! `.pdf`, `.xml`) and its files at repository.overheid.nl.

use crate::connectors::ids::{link_to, segments};

/// Longest identifier, in characters.
pub const MAX_ID_CHARS: usize = 80;

/// The journals' prefixes: what makes an identifier one of theirs (not any word with a
/// hyphen).
const PREFIXES: [&str; 14] = [
    "stb", "stcrt", "trb", "kst", "h-tk", "h-ek", "ah-tk", "ah-ek", "kv-tk", "blg", "gmb", "prb", "wsb", "bgr",
];

/// The publication identifier in `id`, or in a link to its page or files.
pub fn identifier(id: &str) -> Option<String> {
    let candidate = if let Some(url) = link_to(id, "zoek.officielebekendmakingen.nl") {
        let last = segments(&url).pop()?;
        last.split('.').next()?.to_owned()
    } else if let Some(url) = link_to(id, "repository.overheid.nl") {
        // …/frbr/officielepublicaties/{type}/{group}/{id}/{n}/{manifestation}/{id}.{ext}
        let segments = segments(&url);
        let at = segments.iter().position(|s| s == "officielepublicaties")?;
        segments.get(at + 3)?.clone()
    } else {
        id.trim().to_owned()
    };
    let lower = candidate.to_ascii_lowercase();
    let ours = PREFIXES
        .iter()
        .any(|p| lower.strip_prefix(p).is_some_and(|rest| rest.starts_with('-')));
    (ours && is_identifier(&candidate)).then_some(candidate)
}

/// True for a publication identifier: a letter first, then letters, digits, `-`, `_`
/// or `.`, with a hyphen somewhere; never a dot segment.
pub fn is_identifier(id: &str) -> bool {
    (3..=MAX_ID_CHARS).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_alphabetic())
        && id.contains('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !id.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_links_read_as_the_identifier() {
        // Real publications: Staatsblad 2018, 84; Kamerstuk 36200-VII nr. 5; the
        // Algoritmeregister motion, Kamerstuk 35510 nr. 16.
        for (given, id) in [
            ("stb-2018-84", "stb-2018-84"),
            ("kst-36200-VII-5", "kst-36200-VII-5"),
            (
                "https://zoek.officielebekendmakingen.nl/kst-35510-16.html",
                "kst-35510-16",
            ),
            ("https://zoek.officielebekendmakingen.nl/stb-2018-84.pdf", "stb-2018-84"),
            (
                "https://repository.overheid.nl/frbr/officielepublicaties/kst/35510/kst-35510-16/1/xml/kst-35510-16.xml",
                "kst-35510-16",
            ),
        ] {
            assert_eq!(identifier(given).as_deref(), Some(id), "{given}");
        }
        for other in [
            "ECLI:NL:RVS:2015:3394",
            "2021D02426",
            "hello-world",
            "https://zoek.officielebekendmakingen.nl/",
        ] {
            assert_eq!(identifier(other), None, "{other}");
        }
    }
}
