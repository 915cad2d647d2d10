//! Weighted units of platform capacity, as exact fixed-point numbers.
//!
//! Platforms count calls in weighted units: OpenBesluitvorming charges 1/8 unit for a
//! PDF page and `max(1, ceil(limit/24))` for a search. A [`Units`] value is a whole
//! number of thousandths of a unit, so 1/8 (0.125) and 1.3 are exact and every run
//! of the scheduler is reproducible bit for bit. Floats appear only at the edge,
//! when a human or a JSON document writes a cost down ([`Units::from_decimal_str`],
//! [`Units::from_f64`]).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Thousandths of a unit in one unit.
pub const MILLI_PER_UNIT: u64 = 1000;

/// An amount of platform capacity in thousandths of a weighted unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Units(u64);

/// A cost or limit written down in a form that is not a non-negative decimal with
/// at most three decimals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a unit amount: write a non-negative number with at most three decimals")]
pub struct UnitsParseError(pub String);

impl Units {
    /// No capacity at all.
    pub const ZERO: Units = Units(0);
    /// One whole unit.
    pub const ONE: Units = Units(MILLI_PER_UNIT);

    /// `milli` thousandths of a unit.
    pub const fn from_milli(milli: u64) -> Units {
        Units(milli)
    }

    /// `whole` units.
    pub const fn whole(whole: u64) -> Units {
        Units(whole.saturating_mul(MILLI_PER_UNIT))
    }

    /// Thousandths of a unit.
    pub const fn as_milli(self) -> u64 {
        self.0
    }

    /// True for zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self - rhs`, or zero when `rhs` is larger.
    pub const fn saturating_sub(self, rhs: Units) -> Units {
        Units(self.0.saturating_sub(rhs.0))
    }

    /// The smaller of two amounts.
    pub fn min(self, other: Units) -> Units {
        Units(self.0.min(other.0))
    }

    /// The amount without trailing zeros: `1`, `0.125`, `1.3` (for traces and reports).
    pub fn compact(self) -> String {
        let text = self.to_string();
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }

    /// A decimal amount such as `0.125` or `5`, rounded to the nearest thousandth.
    ///
    /// Returns `None` for negative, non-finite or absurdly large values.
    pub fn from_f64(value: f64) -> Option<Units> {
        if !value.is_finite() || !(0.0..=1e12).contains(&value) {
            return None;
        }
        // The bound above keeps the product far inside u64, so the cast is exact.
        Some(Units((value * MILLI_PER_UNIT as f64).round() as u64))
    }

    /// Parses `"1"`, `"0.125"` or `"1.3"` exactly: at most three decimals.
    pub fn from_decimal_str(text: &str) -> Result<Units, UnitsParseError> {
        let err = || UnitsParseError(text.to_owned());
        let t = text.trim();
        let (whole, frac) = match t.split_once('.') {
            Some((w, f)) => (w, f),
            None => (t, ""),
        };
        if whole.is_empty() && frac.is_empty() {
            return Err(err());
        }
        if frac.len() > 3 || !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let whole: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| err())?
        };
        let mut milli: u64 = 0;
        for (i, b) in frac.bytes().enumerate() {
            milli += u64::from(b - b'0') * 10u64.pow(2 - i as u32);
        }
        whole
            .checked_mul(MILLI_PER_UNIT)
            .and_then(|w| w.checked_add(milli))
            .map(Units)
            .ok_or_else(err)
    }
}

impl Add for Units {
    type Output = Units;
    fn add(self, rhs: Units) -> Units {
        Units(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Units {
    fn add_assign(&mut self, rhs: Units) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Units {
    type Output = Units;
    /// Saturating subtraction: capacity never goes below zero.
    fn sub(self, rhs: Units) -> Units {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for Units {
    /// Three decimals, e.g. `0.125` or `60.000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / MILLI_PER_UNIT, self.0 % MILLI_PER_UNIT)
    }
}

impl serde::Serialize for Units {
    /// Whole amounts as integers (`1`), others as decimals (`0.125`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_multiple_of(MILLI_PER_UNIT) {
            s.serialize_u64(self.0 / MILLI_PER_UNIT)
        } else {
            s.serialize_f64(self.0 as f64 / MILLI_PER_UNIT as f64)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Units {
    /// Accepts a JSON/TOML number (`1`, `0.125`) or a decimal string (`"1.3"`).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Units, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Units;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative amount of units with at most three decimals")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Units, E> {
                v.checked_mul(MILLI_PER_UNIT)
                    .map(Units)
                    .ok_or_else(|| E::custom("unit amount too large"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Units, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom("unit amounts are never negative"))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Units, E> {
                Units::from_f64(v).ok_or_else(|| E::custom(format!("{v} is not a unit amount")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Units, E> {
                Units::from_decimal_str(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_strings_parse_exactly() {
        assert_eq!(Units::from_decimal_str("0.125"), Ok(Units::from_milli(125)));
        assert_eq!(Units::from_decimal_str("1.3"), Ok(Units::from_milli(1300)));
        assert_eq!(Units::from_decimal_str("60"), Ok(Units::whole(60)));
        assert_eq!(Units::from_decimal_str(".5"), Ok(Units::from_milli(500)));
        for bad in ["", ".", "-1", "0.1255", "1e3", "abc", "1.2.3"] {
            assert!(Units::from_decimal_str(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn floats_round_to_the_nearest_thousandth() {
        assert_eq!(Units::from_f64(0.125), Some(Units::from_milli(125)));
        assert_eq!(Units::from_f64(1.0 / 3.0), Some(Units::from_milli(333)));
        assert_eq!(Units::from_f64(-0.5), None);
        assert_eq!(Units::from_f64(f64::NAN), None);
    }

    #[test]
    fn compact_drops_trailing_zeros() {
        assert_eq!(Units::whole(1).compact(), "1");
        assert_eq!(Units::from_milli(125).compact(), "0.125");
        assert_eq!(Units::from_milli(1300).compact(), "1.3");
        assert_eq!(Units::ZERO.compact(), "0");
        assert_eq!(Units::whole(60).compact(), "60");
    }

    #[test]
    fn display_has_three_decimals() {
        assert_eq!(Units::from_milli(125).to_string(), "0.125");
        assert_eq!(Units::whole(60).to_string(), "60.000");
    }
}
