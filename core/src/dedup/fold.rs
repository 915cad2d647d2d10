//! Conservative normalisation of request parameters (R-D5, level 1): the platform's own
//! equivalence, so that requests the platform answers identically share one buffer
//! entry, one flight and one replay key.
//!
//! Exact match on the canonical request is the default: a parameter no connector folds
//! is compared byte for byte. A connector folds, per parameter, only what its platform is
//! documented (and its fake shown) to ignore: [`Fold::Whitespace`] where the platform
//! splits words on whitespace; [`Fold::AndWordsCaseless`] where it also drops punctuation,
//! folds case and joins the words with AND (OpenBesluitvorming's `query`);
//! [`Fold::AndWords`] where it joins whitespace-separated words with AND but its folding
//! of case is not known (KOOP's CQL `all`); [`Fold::Upper`] for identifiers the platform
//! reads in any case (an ECLI). Where a value holds a phrase (`"…"`) or an operator, only
//! whitespace is folded: the words' order is then meaning. Diacritics are never folded,
//! and near-duplicates (stop words, plurals, typos) are never merged — they are measured
//! (level 2), not answered from each other.

/// What may be folded away from one parameter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Leading and trailing whitespace, and runs of inner whitespace collapsed to one
    /// space (for platforms that split words on whitespace).
    Whitespace,
    /// Words joined with AND, split on whitespace: their order and repeats are folded
    /// (sorted, each once); case and punctuation are kept. A phrase, an operator
    /// (`AND`, `OR`, `NOT`, `PROX`), a parenthesis or a mask keeps the value as written
    /// (whitespace folded).
    AndWords,
    /// Words joined with AND after the platform lower-cases them and reads every
    /// character that is not a letter or digit as a separator: folded to the lower-case
    /// words, sorted, each once. A phrase keeps the value as written (whitespace folded).
    AndWordsCaseless,
    /// An identifier the platform reads in any case: upper case, surrounding whitespace
    /// dropped.
    Upper,
}

/// Operator words of the query languages folded with [`Fold::AndWords`] (CQL).
const OPERATORS: [&str; 4] = ["AND", "OR", "NOT", "PROX"];

impl Fold {
    /// The folded value.
    pub fn apply(self, value: &str) -> String {
        match self {
            Fold::Whitespace => whitespace(value),
            Fold::AndWords => {
                let words: Vec<&str> = value.split_whitespace().collect();
                let plain = |w: &&str| {
                    !OPERATORS.contains(&w.to_ascii_uppercase().as_str())
                        && !w.contains(['"', '(', ')', '*', '?', '=', '<', '>', '/'])
                };
                if words.iter().all(plain) {
                    sorted_once(words.into_iter().map(str::to_owned).collect())
                } else {
                    whitespace(value)
                }
            }
            Fold::AndWordsCaseless => {
                if value.contains('"') {
                    return whitespace(value);
                }
                let lowered: String = value
                    .chars()
                    .flat_map(|c| {
                        let keep = if c.is_alphanumeric() { c } else { ' ' };
                        keep.to_lowercase()
                    })
                    .collect();
                sorted_once(lowered.split_whitespace().map(str::to_owned).collect())
            }
            Fold::Upper => value.trim().to_uppercase(),
        }
    }
}

fn whitespace(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn sorted_once(mut words: Vec<String>) -> String {
    words.sort();
    words.dedup();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_folds_only_whitespace() {
        assert_eq!(Fold::Whitespace.apply("  stikstof \t  Utrecht "), "stikstof Utrecht");
        // Case, punctuation and diacritics are meaning: never folded.
        assert_ne!(Fold::Whitespace.apply("Stikstof"), Fold::Whitespace.apply("stikstof"));
        assert_ne!(Fold::Whitespace.apply("Officiële"), Fold::Whitespace.apply("Officiele"));
        assert_ne!(Fold::Whitespace.apply("F-35"), Fold::Whitespace.apply("F35"));
    }

    #[test]
    fn and_words_fold_order_and_repeats_but_keep_case_phrases_and_operators() {
        let f = |v: &str| Fold::AndWords.apply(v);
        assert_eq!(f("utrecht  begroting"), f("begroting utrecht begroting"));
        assert_ne!(f("Utrecht begroting"), f("utrecht begroting"), "case is kept");
        assert_ne!(f("F-35 aanschaf"), f("F 35 aanschaf"), "a hyphenated word is one word");
        assert_eq!(f("\"begroting utrecht\""), "\"begroting utrecht\"");
        assert_ne!(
            f("\"begroting utrecht\""),
            f("\"utrecht begroting\""),
            "a phrase keeps its order"
        );
        assert_eq!(f("a OR b"), "a OR b");
        assert_ne!(f("a NOT b"), f("b NOT a"));
        assert_eq!(f("stikst* b"), "stikst* b", "a mask keeps the value as written");
    }

    #[test]
    fn caseless_and_words_fold_case_punctuation_order_and_repeats() {
        let f = |v: &str| Fold::AndWordsCaseless.apply(v);
        assert_eq!(f("Begroting  Utrecht"), "begroting utrecht");
        assert_eq!(f("utrecht, begroting!"), "begroting utrecht");
        assert_eq!(f("F-35"), f("35 f"), "punctuation separates words");
        assert_ne!(f("F-35"), f("F35"));
        assert_ne!(f("Officiële"), f("Officiele"), "diacritics are meaning");
        assert_eq!(
            f("\"Begroting  Utrecht\""),
            "\"Begroting Utrecht\"",
            "a phrase as written"
        );
    }

    #[test]
    fn upper_folds_an_identifiers_case() {
        assert_eq!(Fold::Upper.apply(" ecli:nl:hr:2026:1 "), "ECLI:NL:HR:2026:1");
    }
}
