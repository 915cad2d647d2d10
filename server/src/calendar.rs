//! Calendar days. Every `YYYY-MM-DD` a tool is given or a platform writes is read here, on
//! chrono: the calendar is not ours to write, and one reading means one answer to "is this a
//! day" in every tool.

use chrono::{DateTime, NaiveDate, Utc};

/// The day `text` names when it is written exactly `YYYY-MM-DD` (four digits, two, two) and the
/// calendar has it. chrono alone would also take a sign, more digits or one-digit fields.
pub fn parse_day(text: &str) -> Option<NaiveDate> {
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, c)| {
            if matches!(i, 4 | 7) {
                c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    shaped
        .then(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten()
}

/// Whether `text` is a day written `YYYY-MM-DD` that the calendar has.
pub fn is_day(text: &str) -> bool {
    parse_day(text).is_some()
}

/// The day a platform's date starts with: `YYYY-MM-DD` alone or before a time (`T…` or ` …`);
/// `None` for any other form.
pub fn leading_day(date: &str) -> Option<&str> {
    let (first, rest) = (date.get(..10)?, &date[10..]);
    (is_day(first) && (rest.is_empty() || rest.starts_with(['T', ' ']))).then_some(first)
}

/// The day `year`, `month` (1–12), `day` as `YYYY-MM-DD`, when the calendar has it.
pub fn ymd(year: i32, month: u32, day: u32) -> Option<String> {
    NaiveDate::from_ymd_opt(year, month, day).map(|d| d.format("%Y-%m-%d").to_string())
}

/// The UTC day of a moment given in milliseconds since 1970, `YYYY-MM-DD`.
pub fn utc_day(ms: u64) -> String {
    utc(ms).format("%Y-%m-%d").to_string()
}

/// A moment given in milliseconds since 1970 as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_moment(ms: u64) -> String {
    utc(ms).format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

fn utc(ms: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX)).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_written_one_way_and_the_calendar_has_it() {
        for ok in ["2024-02-29", "2026-01-31", "0001-01-01", "9999-12-31"] {
            assert!(is_day(ok), "{ok}");
        }
        for bad in [
            "2023-02-29",
            "2024-04-31",
            "2024-13-01",
            "2024-00-10",
            "24-04-01",
            "2024-4-01",
            "+026-01-31",
            "2026-01-3 ",
            " 2026-01-3",
            "2026/01/31",
            "20260-1-31",
            "",
        ] {
            assert!(!is_day(bad), "{bad}");
        }
    }

    #[test]
    fn a_platforms_date_gives_its_day_only_before_a_time() {
        assert_eq!(leading_day("2026-03-01T10:00:00+01:00"), Some("2026-03-01"));
        assert_eq!(leading_day("2026-03-01 10:00"), Some("2026-03-01"));
        assert_eq!(leading_day("2026-03-01"), Some("2026-03-01"));
        assert_eq!(leading_day("2026-03-011"), None);
        assert_eq!(leading_day("2026-02-30T00:00"), None);
        assert_eq!(leading_day("1 maart 2026"), None);
        assert_eq!(ymd(2026, 2, 28).as_deref(), Some("2026-02-28"));
        assert_eq!(ymd(2026, 2, 29), None);
    }

    #[test]
    fn moments_are_utc() {
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_moment(1_709_164_800_000 + 3_723_000), "2024-02-29 01:02:03 UTC");
        assert_eq!(utc_day(1_709_251_199_999), "2024-02-29");
        assert_eq!(utc_day(u64::MAX), utc_day(i64::MAX as u64));
    }
}
