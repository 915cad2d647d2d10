//! The textual form of one setting of one fake, `NAME=VALUE`, below everything that
//! reads it: the error a bad one gives ([`FaultParseError`]) and the readers of its values
//! (milliseconds, counts, flags, whole numbers). The common faults (`config.rs`) and every
//! fake's own settings (`own.rs`, each fake's module) read their values with these, so a
//! bad value reads alike whichever setting it was given to.
//!
//! Invariants: every error says what was wrong in a sentence meant to be shown as is,
//! naming the setting.
//!
//! What this module does not do: know any setting's name, common or own (`config.rs`,
//! the fakes), or apply a setting.

use std::time::Duration;

/// A setting (`NAME=VALUE`, a common fault or one of a fake's own) that cannot be parsed,
/// with the reason (meant to be shown as is).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FaultParseError(String);

impl FaultParseError {
    /// An error that says `why`, in a sentence meant to be shown as is.
    pub(crate) fn new(why: impl Into<String>) -> FaultParseError {
        FaultParseError(why.into())
    }
}

/// A whole number of milliseconds, as `NAME=VALUE` gives it.
pub(crate) fn millis(name: &str, value: &str) -> Result<Duration, FaultParseError> {
    whole(name, value).map(Duration::from_millis)
}

/// A count `N` that strikes every n-th event, `0` for never (`None`).
pub(crate) fn every(name: &str, value: &str) -> Result<Option<u32>, FaultParseError> {
    let n = whole(name, value)?;
    let n = u32::try_from(n).map_err(|_| FaultParseError::new(format!("{name}: {n} is too large")))?;
    Ok((n > 0).then_some(n))
}

/// `true` or `false`.
pub(crate) fn flag(name: &str, value: &str) -> Result<bool, FaultParseError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(FaultParseError::new(format!(
            "{name} takes true or false, not `{value}`"
        ))),
    }
}

/// A whole number.
pub(crate) fn whole(name: &str, value: &str) -> Result<u64, FaultParseError> {
    value
        .parse::<u64>()
        .map_err(|_| FaultParseError::new(format!("{name} takes a whole number, not `{value}`")))
}

/// Splits `NAME=VALUE`.
pub(crate) fn name_value(text: &str) -> Result<(&str, &str), FaultParseError> {
    text.split_once('=')
        .ok_or_else(|| FaultParseError::new(format!("`{text}` is not NAME=VALUE")))
}
