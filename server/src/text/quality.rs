//! How close an extracted text is to its source: the measure the corpus tests hold the
//! extractor to and the text bench reports beside pdftotext's (one definition, so the
//! test's threshold and the bench's figure are the same quantity).

/// Whitespace runs as one space (line breaks and columns are not what is measured).
pub fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Character-level similarity: 1 − edit distance / the longer length (1.0 for equal
/// texts, also for two empty ones).
pub fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    1.0 - row[b.len()] as f64 / a.len().max(b.len()).max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_is_one_minus_the_edit_distance_share() {
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("abcd", "abcd"), 1.0);
        assert_eq!(similarity("abcd", "abxd"), 0.75);
        assert_eq!(similarity("abcd", ""), 0.0);
        assert_eq!(squeeze(" a \n\n b\tc "), "a b c");
    }
}
