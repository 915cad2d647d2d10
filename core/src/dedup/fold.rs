//! Conservative normalisation of request parameters (R-D5).
//!
//! Exact match on the canonical request is the default. A connector declares, per
//! parameter, what is safe to fold because the platform itself ignores it — surrounding
//! whitespace, or letter case where the platform's search ignores case. Nothing else is
//! folded; near-duplicate (semantic) matching is out of scope.

/// What may be folded away from one parameter's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fold {
    /// Nothing: the value is compared byte for byte.
    #[default]
    Exact,
    /// Leading and trailing whitespace, and runs of inner whitespace collapsed to one
    /// space (for platforms that split words on whitespace).
    Whitespace,
    /// Whitespace as above, and letter case (for platforms whose search ignores case).
    WhitespaceAndCase,
}

impl Fold {
    /// The folded value.
    pub fn apply(self, value: &str) -> String {
        match self {
            Fold::Exact => value.to_owned(),
            Fold::Whitespace => value.split_whitespace().collect::<Vec<_>>().join(" "),
            Fold::WhitespaceAndCase => Fold::Whitespace.apply(value).to_lowercase(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_folds_nothing() {
        assert_eq!(Fold::Exact.apply("  Stikstof "), "  Stikstof ");
    }

    #[test]
    fn whitespace_and_case_fold_only_what_they_say() {
        assert_eq!(Fold::Whitespace.apply("  stikstof \t  Utrecht "), "stikstof Utrecht");
        assert_eq!(Fold::WhitespaceAndCase.apply(" Stikstof  UTRECHT"), "stikstof utrecht");
        // Punctuation and diacritics are meaning: never folded.
        assert_ne!(
            Fold::WhitespaceAndCase.apply("Officiële"),
            Fold::WhitespaceAndCase.apply("Officiele")
        );
        assert_ne!(
            Fold::WhitespaceAndCase.apply("F-35"),
            Fold::WhitespaceAndCase.apply("F35")
        );
    }
}
