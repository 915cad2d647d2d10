//! The ids and links EUR-Lex reads (`fetch`, and `eurlex_read`'s `id`): a CELEX number
//! (`32014R0001`, `CELEX:32014R0001`, with `#article` if wanted), an ELI
//! (`data.europa.eu/eli/reg/2024/903/oj`, also on eur-lex.europa.eu), a link to EUR-Lex
//! (`eur-lex.europa.eu/legal-content/NL/TXT/?uri=CELEX:32024R0903`, whose language is
//! read too) and CELLAR's own `publications.europa.eu/resource/celex/…`.
//!
//! What this module does not do: read the act (the reading tool does).

use reqwest::Url;

use crate::connectors::ids::{link_to, query_value, segments};
use crate::platforms::eurlex::sparql::{Language, is_celex};

/// What an id asks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Asked {
    /// The CELEX number.
    pub celex: String,
    /// The language the link names, if any.
    pub language: Option<Language>,
    /// One article, if the id names it.
    pub article: Option<String>,
}

/// A CELEX number as written, with or without `CELEX:`, upper-cased and checked.
fn celex_of(text: &str) -> Option<String> {
    let text = text.trim();
    let bare = match text.get(..6) {
        Some(head) if head.eq_ignore_ascii_case("celex:") => &text[6..],
        _ => text,
    };
    let celex = bare.trim().to_ascii_uppercase();
    is_celex(&celex).then_some(celex)
}

/// The CELEX number of an ELI's path segments (`eli`, `reg`, `2024`, `903`, …): only
/// the kinds whose CELEX follows from year and number (regulations, directives,
/// decisions of the Union's sector 3).
fn celex_of_eli(segments: &[String]) -> Option<String> {
    let at = segments.iter().position(|s| s == "eli")?;
    let kind = segments.get(at + 1)?;
    let year = segments.get(at + 2)?;
    let number = segments.get(at + 3)?;
    let letter = match kind.split('_').next()? {
        "reg" => 'R',
        "dir" => 'L',
        "dec" => 'D',
        _ => return None,
    };
    let valid = year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit());
    let number_ok = !number.is_empty() && number.len() <= 4 && number.bytes().all(|b| b.is_ascii_digit());
    (valid && number_ok).then(|| format!("3{year}{letter}{number:0>4}"))
}

/// The language a EUR-Lex path names (`/legal-content/NL/…`).
fn language_of(segments: &[String]) -> Option<Language> {
    segments.iter().find_map(|s| match s.as_str() {
        "NL" | "nl" | "nld" => Some(Language::Nl),
        "EN" | "en" | "eng" => Some(Language::En),
        _ => None,
    })
}

fn from_link(url: &Url) -> Option<Asked> {
    let segments = segments(url);
    if let Some(uri) = query_value(url, "uri")
        && let Some(celex) = celex_of(&uri)
    {
        return Some(Asked {
            celex,
            language: language_of(&segments),
            article: None,
        });
    }
    if let Some(celex) = celex_of_eli(&segments) {
        return Some(Asked {
            celex,
            language: language_of(&segments[segments.iter().position(|s| s == "eli").unwrap_or(0)..]),
            article: None,
        });
    }
    let at = segments.iter().position(|s| s == "celex")?;
    Some(Asked {
        celex: celex_of(segments.get(at + 1)?)?,
        language: None,
        article: None,
    })
}

/// What `id` asks: a CELEX number with an `#article` if wanted, an ELI, or a link to
/// EUR-Lex or CELLAR.
pub fn asked(id: &str) -> Option<Asked> {
    let id = id.trim();
    for host in ["eur-lex.europa.eu", "data.europa.eu", "publications.europa.eu"] {
        if let Some(url) = link_to(id, host) {
            return from_link(&url);
        }
    }
    let (celex, article) = match id.split_once('#') {
        Some((c, a)) => (c, Some(a.trim().to_owned()).filter(|a| !a.is_empty())),
        None => (id, None),
    };
    Some(Asked {
        celex: celex_of(celex)?,
        language: None,
        article,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(celex: &str, language: Option<Language>, article: Option<&str>) -> Option<Asked> {
        Some(Asked {
            celex: celex.into(),
            language,
            article: article.map(Into::into),
        })
    }

    #[test]
    fn celex_numbers_elis_and_eur_lex_links_are_read() {
        assert_eq!(asked("32014R0001"), a("32014R0001", None, None));
        assert_eq!(asked("CELEX:32014R0001"), a("32014R0001", None, None));
        assert_eq!(asked("celex:32024r0903#3"), a("32024R0903", None, Some("3")));
        assert_eq!(asked("data.europa.eu/eli/reg/2024/903/oj"), a("32024R0903", None, None));
        assert_eq!(
            asked("http://data.europa.eu/eli/dir/2019/1937/oj/nld"),
            a("32019L1937", Some(Language::Nl), None)
        );
        assert_eq!(
            asked("eur-lex.europa.eu/legal-content/NL/TXT/?uri=CELEX:32024R0903"),
            a("32024R0903", Some(Language::Nl), None)
        );
        assert_eq!(
            asked("https://eur-lex.europa.eu/legal-content/EN/TXT/HTML/?uri=CELEX:32008R1137"),
            a("32008R1137", Some(Language::En), None)
        );
        assert_eq!(
            asked("http://publications.europa.eu/resource/celex/32008R1137"),
            a("32008R1137", None, None)
        );
        assert_eq!(asked("https://eur-lex.europa.eu/homepage.html"), None);
        assert_eq!(asked("BWBR0018451"), None);
        assert_eq!(asked("ECLI:NL:HR:2019:2006"), None);
    }
}
