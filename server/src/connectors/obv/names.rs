//! An `organization` as the assistant writes it — a key (`gemeente-utrecht`), a name
//! (`Gemeente Utrecht`, `gemeente utrecht`) or a place (`Utrecht`) — read against
//! OpenBesluitvorming's list of sources before the platform is asked: the platform
//! refuses anything but an exact key (`unknown_organization`), and every refusal costs
//! a unit of the limit all sessions share.
//!
//! [`resolve`]: an exact key (any case) is that key; a name that equals one source's
//! name or key (words compared without case or punctuation) is that source; otherwise
//! the sources whose name holds the asked words as whole words, narrowed to a kind
//! (`gemeente`, `provincie`, `waterschap`) when the asked words start with one: one such
//! source is it; several are [`Resolved::Ambiguous`]; none is [`Resolved::Unknown`] with
//! the closest names. Nothing here asks the platform.

use super::render::{SourceEntry, SourcesAnswer};
use crate::connectors::ask::{Resolution, of_candidates};
use crate::connectors::offers::{Choice, words};

/// What an asked organization is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// This source's key.
    Key(String),
    /// Several sources fit (at most [`MAX_CANDIDATES`], best first).
    Ambiguous(Vec<SourceEntry>),
    /// None fits; these are the closest (at most [`MAX_CANDIDATES`], best first).
    Unknown(Vec<SourceEntry>),
}

/// The most candidates an answer lists.
pub const MAX_CANDIDATES: usize = 8;

/// The kinds of organization a name may start with, as the keys spell them, and the
/// platform's `organizationType` they stand for.
const KINDS: &[(&str, &str)] = &[
    ("gemeente", "municipality"),
    ("provincie", "province"),
    ("waterschap", "water_board"),
    ("hoogheemraadschap", "water_board"),
    ("wetterskip", "water_board"),
];

/// Whether `needle`'s words occur in `hay` as whole words, in order, together.
fn holds_words(hay: &str, needle: &str) -> bool {
    !needle.is_empty() && format!(" {hay} ").contains(&format!(" {needle} "))
}

/// Reads `asked` against `sources`. See the module documentation.
pub fn resolve(sources: &SourcesAnswer, asked: &str) -> Resolved {
    let asked = asked.trim();
    if let Some(s) = sources.sources.iter().find(|s| s.key.eq_ignore_ascii_case(asked)) {
        return Resolved::Key(s.key.clone());
    }
    let wanted = words(asked);
    let exact: Vec<&SourceEntry> = sources
        .sources
        .iter()
        .filter(|s| words(&s.label) == wanted || words(&s.key) == wanted)
        .collect();
    if let [one] = exact.as_slice() {
        return Resolved::Key(one.key.clone());
    }
    // "gemeente Utrecht": the kind narrows, the rest is the place.
    let (kind, place) = KINDS
        .iter()
        .find_map(|(word, kind)| {
            wanted
                .strip_prefix(word)
                .filter(|rest| rest.is_empty() || rest.starts_with(' '))
                .map(|rest| (Some(*kind), rest.trim().to_owned()))
        })
        .unwrap_or((None, wanted.clone()));
    let fits: Vec<SourceEntry> = sources
        .sources
        .iter()
        .filter(|s| kind.is_none_or(|k| s.organization_type == k))
        .filter(|s| holds_words(&words(&s.label), &place) || holds_words(&words(&s.key), &place))
        .cloned()
        .collect();
    match fits.len() {
        1 => Resolved::Key(fits[0].key.clone()),
        0 => Resolved::Unknown(closest(sources, &place, kind)),
        _ => {
            let mut fits = fits;
            // The shortest names first: `Gemeente Utrecht` before `Gemeente Utrechtse Heuvelrug`.
            fits.sort_by_key(|s| (s.label.len(), s.key.clone()));
            fits.truncate(MAX_CANDIDATES);
            Resolved::Ambiguous(fits)
        }
    }
}

/// The sources whose names are nearest `place` (Jaro–Winkler on the name without its
/// kind), of `kind` when one was asked.
fn closest(sources: &SourcesAnswer, place: &str, kind: Option<&str>) -> Vec<SourceEntry> {
    let bare = |s: &SourceEntry| {
        let w = words(&s.label);
        KINDS
            .iter()
            .find_map(|(word, _)| w.strip_prefix(word).map(|r| r.trim().to_owned()))
            .unwrap_or(w)
    };
    let mut scored: Vec<(f64, &SourceEntry)> = sources
        .sources
        .iter()
        .filter(|s| kind.is_none_or(|k| s.organization_type == k))
        .map(|s| (strsim::jaro_winkler(&bare(s), place), s))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
    scored.into_iter().take(5).map(|(_, s)| s.clone()).collect()
}

/// What an asked `organization` names, for asking back: the sources it fits, each by
/// its key and its name.
pub fn asked(sources: &SourcesAnswer, asked: &str) -> Resolution {
    match resolve(sources, asked) {
        Resolved::Key(_) => Resolution::Exact,
        Resolved::Unknown(_) => Resolution::Unknown,
        Resolved::Ambiguous(fits) => of_candidates(
            fits.into_iter()
                .map(|s| Choice {
                    value: s.key,
                    label: s.label,
                })
                .collect(),
        ),
    }
}

/// What to say of an `organization` that is not one source: which sources it could be,
/// and that no search was made — "nothing was asked of OpenBesluitvorming" only when
/// the list of sources came from the buffer (`list_read`: this call read it from the
/// platform, which costs a unit). `None` for one source. The sources are the answer's
/// candidates.
pub fn refusal(tool: &str, asked: &str, resolved: &Resolved, list_read: bool) -> Option<(String, Vec<SourceEntry>)> {
    let list = |sources: &[SourceEntry]| {
        sources
            .iter()
            .map(|s| format!("`{}` ({})", s.key, s.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let asked = crate::platforms::http::brief(asked);
    let asked_of = if list_read {
        "no search was made; only OpenBesluitvorming's list of sources was read"
    } else {
        "nothing was asked of OpenBesluitvorming"
    };
    match resolved {
        Resolved::Key(_) => None,
        Resolved::Ambiguous(fits) => Some((
            format!(
                "{tool}: `organization` `{asked}` fits {} sources of OpenBesluitvorming: {}. Give one key as \
                 `organization` ({asked_of}).",
                fits.len(),
                list(fits)
            ),
            fits.clone(),
        )),
        Resolved::Unknown(near) => Some((
            format!(
                "{tool}: no OpenBesluitvorming source is called `{asked}`; the nearest: {}. Give a key as \
                 `organization` (obv_sources lists them all; {asked_of}).",
                list(near)
            ),
            near.clone(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(key: &str, label: &str, kind: &str) -> SourceEntry {
        SourceEntry {
            key: key.into(),
            label: label.into(),
            supplier: "notubiz".into(),
            organization_type: kind.into(),
            implemented: true,
        }
    }

    fn sources() -> SourcesAnswer {
        SourcesAnswer {
            sources: vec![
                source("gemeente-utrecht", "Gemeente Utrecht", "municipality"),
                source("provincie-utrecht", "Provincie Utrecht", "province"),
                source(
                    "gemeente-utrechtse-heuvelrug",
                    "Gemeente Utrechtse Heuvelrug",
                    "municipality",
                ),
                source("gemeente-amersfoort", "Gemeente Amersfoort", "municipality"),
                source("gemeente-den-haag", "Gemeente Den Haag", "municipality"),
                source("gemeente-sudwest-fryslan", "Gemeente Súdwest-Fryslân", "municipality"),
                source(
                    "waterschap-vallei-en-veluwe",
                    "Waterschap Vallei en Veluwe",
                    "water_board",
                ),
            ],
        }
    }

    fn key(asked: &str) -> Resolved {
        resolve(&sources(), asked)
    }

    #[test]
    fn a_key_or_a_name_of_one_source_is_that_source() {
        for (asked, want) in [
            ("gemeente-utrecht", "gemeente-utrecht"),
            ("Gemeente-Utrecht", "gemeente-utrecht"),
            ("Gemeente Utrecht", "gemeente-utrecht"),
            ("gemeente utrecht", "gemeente-utrecht"),
            ("provincie Utrecht", "provincie-utrecht"),
            ("Amersfoort", "gemeente-amersfoort"),
            ("den haag", "gemeente-den-haag"),
            ("Súdwest-Fryslân", "gemeente-sudwest-fryslan"),
            ("sudwest fryslan", "gemeente-sudwest-fryslan"),
            ("Vallei en Veluwe", "waterschap-vallei-en-veluwe"),
            ("Utrechtse Heuvelrug", "gemeente-utrechtse-heuvelrug"),
        ] {
            assert_eq!(key(asked), Resolved::Key(want.into()), "{asked}");
        }
    }

    #[test]
    fn a_place_of_several_sources_lists_them_shortest_name_first() {
        let Resolved::Ambiguous(fits) = key("Utrecht") else {
            panic!("ambiguous: {:?}", key("Utrecht"));
        };
        let keys: Vec<&str> = fits.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["gemeente-utrecht", "provincie-utrecht"], "whole words only");
        let (text, candidates) = refusal("obv_search", "Utrecht", &key("Utrecht"), false).expect("refused");
        assert!(
            text.contains("`gemeente-utrecht` (Gemeente Utrecht)") && text.contains("nothing was asked"),
            "{text}"
        );
        assert_eq!(candidates, fits);
        // The call that read the list of sources from the platform does not say it asked nothing.
        let (text, _) = refusal("obv_search", "Utrecht", &key("Utrecht"), true).expect("refused");
        assert!(
            !text.contains("nothing was asked") && text.contains("only OpenBesluitvorming's list of sources was read"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_name_lists_the_nearest() {
        let Resolved::Unknown(near) = key("Amersfort") else {
            panic!("unknown: {:?}", key("Amersfort"));
        };
        assert_eq!(near[0].key, "gemeente-amersfoort");
        let Resolved::Unknown(near) = key("provincie Amersfoort") else {
            panic!("unknown");
        };
        assert!(near.iter().all(|s| s.organization_type == "province"), "{near:?}");
        assert_eq!(refusal("obv_search", "x", &Resolved::Key("k".into()), false), None);
    }

    /// Every source's own key and own name resolve to it (a reference model: the list itself).
    #[test]
    fn every_source_is_found_by_its_key_and_by_its_name() {
        let all = sources();
        for s in &all.sources {
            assert_eq!(resolve(&all, &s.key), Resolved::Key(s.key.clone()));
            assert_eq!(resolve(&all, &s.label), Resolved::Key(s.key.clone()), "{}", s.label);
        }
    }
}
