//! Conservative normalisation of request parameters (R-D5).
//!
//! Exact match on the canonical request is the default: a parameter no connector folds
//! is compared byte for byte. A connector folds what the platform itself ignores, per
//! parameter; today that is surrounding and repeated whitespace where the platform
//! splits words on whitespace. Letter case, punctuation and diacritics are meaning and
//! are never folded here; near-duplicate (semantic) matching is out of scope.

/// What may be folded away from one parameter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Leading and trailing whitespace, and runs of inner whitespace collapsed to one
    /// space (for platforms that split words on whitespace).
    Whitespace,
}

impl Fold {
    /// The folded value.
    pub fn apply(self, value: &str) -> String {
        match self {
            Fold::Whitespace => value.split_whitespace().collect::<Vec<_>>().join(" "),
        }
    }
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
}
