//! What every fake platform does alike: the faults all of them apply ([`FakeConfig`]),
//! and the textual form of one setting of one fake (`obv:fail-every=2`,
//! `ori:retired=html`), as `besluitbron-sim fakes --fault` and the control route take it.
//!
//! A fake's own settings (OpenBesluitvorming's limit, Open Raadsinformatie's retired
//! shapes, …) are not here: each fake declares them in its own module, as a type with
//! [`OwnSettings`](crate::OwnSettings) (e.g. [`ObvSettings`](crate::ObvSettings) in
//! `obv.rs`), and its registry line names that type. So [`PlatformFault`] is parsed by
//! the registry (`registry.rs`, above every fake): the common names through
//! [`FaultSetting`] here, every other name by the fake's own parser, found through its
//! line; adding a fake, or a setting of one fake, never touches this module, and this
//! module imports neither the registry nor a fake.
//!
//! Invariants: the default configuration is a healthy platform (no fault on), and every
//! field can be changed while the fake runs
//! ([`FakeHandle::update`](crate::FakeHandle::update)); the next request sees the change.
//! A setting is parsed whole into a typed value before anything is applied, so a bad one
//! changes nothing.
//!
//! What this module does not do: apply the faults (see `faults.rs`), keep counters, read
//! a value's text (`setting_text.rs`, below this module and every fake's own settings), or
//! know any fake's own settings.

use std::str::FromStr;
use std::time::Duration;

use besluitbron_core::PlatformId;

use crate::hostile::HostileBody;
use crate::own::OwnSetting;
use crate::setting_text::{FaultParseError, every, flag, millis, name_value};

/// The faults every fake applies; change them while running with [`FakeHandle::update`](crate::FakeHandle::update).
///
/// Every fault is off by default. The faults of an answer (`latency`, `fail_every`,
/// `garbage`) model a platform that works but badly; the faults of arrival (`stall`,
/// `reset_every`, `rate_limit_storm`) model one that does not, and strike before the
/// platform looks at the request, so they charge nothing to OpenBesluitvorming's bucket.
///
/// What one fake does beyond these is its own ([`OwnSettings`](crate::OwnSettings)):
/// see [`FakeHandle::update_own`](crate::FakeHandle::update_own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FakeConfig {
    /// Normal slowness: added before every answer the platform gives (after the rate
    /// limit has been applied, so a 429 of the bucket comes at once). Zero: none.
    pub latency: Duration,
    /// Answer HTTP 500 to every n-th request that passes the rate limit (counted from the
    /// fake's start, [`FakeHandle::failures_injected`](crate::FakeHandle::failures_injected));
    /// `None` never.
    pub fail_every: Option<u32>,
    /// Answer every request with a 200 whose body is HTML, not JSON.
    pub garbage: bool,
    /// Drop the connection without any answer on every n-th request received (counted
    /// as [`FakeHandle::requests`](crate::FakeHandle::requests) counts them, from the
    /// fake's start): no status line, no headers; the client sees the connection closed
    /// before a response (reqwest: "connection closed before message completed").
    /// Counted in [`FakeHandle::connections_reset`](crate::FakeHandle::connections_reset).
    /// `None` never.
    pub reset_every: Option<u32>,
    /// A pathological hang: hold every request this long on arrival, before anything
    /// else happens to it, to make clients time out. Unlike `latency` it is not the
    /// platform being slow at answering but not answering for a while; a stalled request
    /// then goes on as any other (it may still be reset, refused or answered). Counted in
    /// [`FakeHandle::stalled`](crate::FakeHandle::stalled). `None` never.
    pub stall: Option<Duration>,
    /// A rate-limit storm: answer every request 429 with `Retry-After: 1`, whatever the
    /// caller's bucket holds, in the platform's own 429 shape (OpenBesluitvorming: its JSON
    /// body and `RateLimit-*` headers claiming an empty bucket; Tweede Kamer: an OData
    /// error). Nothing is charged; each refusal is counted in
    /// [`FakeHandle::rate_limited`](crate::FakeHandle::rate_limited).
    pub rate_limit_storm: bool,
    /// A platform gone wrong in size: answer every accepted request with a 200 of this
    /// many bytes, made as it is sent (the fake holds one 64 KiB chunk, whatever the
    /// size), so a test sees how much a client actually read
    /// ([`FakeHandle::oversize_bytes_sent`](crate::FakeHandle::oversize_bytes_sent)).
    /// `None` never.
    pub oversize: Option<Oversize>,
    /// A platform attacking its client: answer every accepted request with this hostile
    /// answer, made from the real one where it can be (see
    /// [`HostileBody`](crate::HostileBody)). `None` never.
    pub hostile: Option<HostileBody>,
}

/// An answer larger than any client should read ([`FakeConfig::oversize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oversize {
    /// The body's size in bytes.
    pub bytes: u64,
    /// Announce the size in `Content-Length` (else the body is chunked, size unknown).
    pub announce_length: bool,
}

/// One fault of [`FakeConfig`] with its value, parsed from `NAME=VALUE`.
///
/// | `NAME` | `VALUE` | field |
/// |---|---|---|
/// | `latency-ms` | milliseconds | [`FakeConfig::latency`] |
/// | `stall-ms` | milliseconds, `0` off | [`FakeConfig::stall`] |
/// | `fail-every` | N, `0` off | [`FakeConfig::fail_every`] |
/// | `reset-every` | N, `0` off | [`FakeConfig::reset_every`] |
/// | `garbage` | `true` or `false` | [`FakeConfig::garbage`] |
/// | `rate-limit-storm` | `true` or `false` | [`FakeConfig::rate_limit_storm`] |
/// | `hostile` | a [`HostileBody`] name, `off` | [`FakeConfig::hostile`] |
///
/// A fake's own names (`ori:retired=html`, `opentk:busy=true`) are its
/// [`OwnSettings::NAMES`](crate::OwnSettings::NAMES), parsed by [`PlatformFault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultSetting {
    /// `latency-ms=N`.
    Latency(Duration),
    /// `stall-ms=N`; `None` for 0.
    Stall(Option<Duration>),
    /// `fail-every=N`; `None` for 0.
    FailEvery(Option<u32>),
    /// `reset-every=N`; `None` for 0.
    ResetEvery(Option<u32>),
    /// `garbage=BOOL`.
    Garbage(bool),
    /// `rate-limit-storm=BOOL`.
    RateLimitStorm(bool),
    /// `hostile=NAME`; `None` for `off`.
    Hostile(Option<HostileBody>),
}

impl FaultSetting {
    /// Every `NAME` a setting may have, in the order of the table above.
    pub const NAMES: [&'static str; 7] = [
        "latency-ms",
        "stall-ms",
        "fail-every",
        "reset-every",
        "garbage",
        "rate-limit-storm",
        "hostile",
    ];

    /// Sets this fault in `config`.
    pub fn apply(self, config: &mut FakeConfig) {
        match self {
            FaultSetting::Latency(latency) => config.latency = latency,
            FaultSetting::Stall(stall) => config.stall = stall,
            FaultSetting::FailEvery(every) => config.fail_every = every,
            FaultSetting::ResetEvery(every) => config.reset_every = every,
            FaultSetting::Garbage(on) => config.garbage = on,
            FaultSetting::RateLimitStorm(on) => config.rate_limit_storm = on,
            FaultSetting::Hostile(hostile) => config.hostile = hostile,
        }
    }

    /// Parses `value` for the fault `name`; `None` when no common fault has that name
    /// (it may still be one of a fake's own).
    pub(crate) fn parse(name: &str, value: &str) -> Option<Result<FaultSetting, FaultParseError>> {
        let setting = |parsed: Result<FaultSetting, FaultParseError>| Some(parsed);
        match name {
            "latency-ms" => setting(millis(name, value).map(FaultSetting::Latency)),
            "stall-ms" => setting(millis(name, value).map(|d| FaultSetting::Stall(Some(d).filter(|d| !d.is_zero())))),
            "fail-every" => setting(every(name, value).map(FaultSetting::FailEvery)),
            "reset-every" => setting(every(name, value).map(FaultSetting::ResetEvery)),
            "garbage" => setting(flag(name, value).map(FaultSetting::Garbage)),
            "rate-limit-storm" => setting(flag(name, value).map(FaultSetting::RateLimitStorm)),
            "hostile" => setting(match value {
                "off" => Ok(FaultSetting::Hostile(None)),
                _ => value.parse().map(|h| FaultSetting::Hostile(Some(h))),
            }),
            _ => None,
        }
    }
}

impl FromStr for FaultSetting {
    type Err = FaultParseError;

    /// Parses one of the common faults (a fake's own names are refused here; see
    /// [`PlatformFault`]).
    fn from_str(text: &str) -> Result<FaultSetting, FaultParseError> {
        let (name, value) = name_value(text)?;
        FaultSetting::parse(name, value).unwrap_or_else(|| Err(unknown(name, &[])))
    }
}

impl FromStr for HostileBody {
    type Err = FaultParseError;

    /// `billion-laughs`, `external-entity`, `deep-nesting`, `wrong-content-type`,
    /// `truncated-gzip`, `redirect-off-host`, `redirect-loop`, `drip`,
    /// `cut-after-record` or `error-object`.
    fn from_str(text: &str) -> Result<HostileBody, FaultParseError> {
        HostileBody::ALL.into_iter().find(|h| h.name() == text).ok_or_else(|| {
            let names: Vec<&str> = HostileBody::ALL.iter().map(|h| h.name()).collect();
            FaultParseError::new(format!("hostile takes {} or off, not `{text}`", names.join(", ")))
        })
    }
}

/// The error for a `name` that is neither a common fault nor one of `own`.
pub(crate) fn unknown(name: &str, own: &[&str]) -> FaultParseError {
    let names: Vec<&str> = FaultSetting::NAMES.iter().chain(own).copied().collect();
    FaultParseError::new(format!("unknown fault `{name}`; one of {}", names.join(", ")))
}

/// One setting of one fake: a fault every fake applies, or one of the fake's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FakeSetting {
    /// A fault of [`FakeConfig`].
    Common(FaultSetting),
    /// One of the fake's own settings, parsed by that fake (see
    /// [`OwnSettings`](crate::OwnSettings)); it applies to that fake only.
    Own(OwnSetting),
}

/// A setting for one fake of the registry, parsed from `PLATFORM:NAME=VALUE`
/// (e.g. `obv:fail-every=2`, `tk:latency-ms=200`, `obv:rate-limit-storm=true`,
/// `ori:retired=html`). Apply it with [`FakeHandle::apply`](crate::FakeHandle::apply).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformFault {
    /// A platform the [`REGISTRY`](crate::REGISTRY) has a fake for.
    pub platform: PlatformId,
    /// What to set in its configuration. An [`FakeSetting::Own`] belongs to this
    /// platform's fake: applying it to another one panics.
    pub setting: FakeSetting,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_settings_parse_every_name_and_apply_to_their_field() {
        let mut config = FakeConfig::default();
        for (text, expected) in [
            ("latency-ms=200", FaultSetting::Latency(Duration::from_millis(200))),
            ("stall-ms=1500", FaultSetting::Stall(Some(Duration::from_millis(1500)))),
            ("stall-ms=0", FaultSetting::Stall(None)),
            ("fail-every=2", FaultSetting::FailEvery(Some(2))),
            ("fail-every=0", FaultSetting::FailEvery(None)),
            ("reset-every=3", FaultSetting::ResetEvery(Some(3))),
            ("garbage=true", FaultSetting::Garbage(true)),
            ("rate-limit-storm=true", FaultSetting::RateLimitStorm(true)),
            ("hostile=drip", FaultSetting::Hostile(Some(HostileBody::Drip))),
            ("hostile=off", FaultSetting::Hostile(None)),
        ] {
            let parsed: FaultSetting = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(parsed, expected, "{text}");
            parsed.apply(&mut config);
        }
        let expected = FakeConfig {
            latency: Duration::from_millis(200),
            stall: None,
            fail_every: None,
            reset_every: Some(3),
            garbage: true,
            rate_limit_storm: true,
            ..FakeConfig::default()
        };
        assert_eq!(config, expected);
        // Every name in NAMES parses with some value.
        for name in FaultSetting::NAMES {
            let value = match name {
                "garbage" | "rate-limit-storm" => "false",
                "hostile" => "redirect-loop",
                _ => "1",
            };
            assert!(format!("{name}={value}").parse::<FaultSetting>().is_ok(), "{name}");
        }
    }

    #[test]
    fn bad_fault_settings_say_what_is_wrong() {
        let error = |text: &str| text.parse::<PlatformFault>().unwrap_err().to_string();
        assert!(error("obv").contains("PLATFORM:NAME=VALUE"), "{}", error("obv"));
        assert!(error("obv:fail-every").contains("NAME=VALUE"));
        assert!(error("obv:fail-every=x").contains("whole number"));
        assert!(error("obv:fail-every=99999999999").contains("too large"));
        assert!(error("obv:garbage=yes").contains("true or false"));
        assert!(error("obv:slow=1").contains("unknown fault `slow`; one of latency-ms"));
        assert!(error("nope:garbage=true").contains("no fake for `nope`; one of obv, tk, rechtspraak, opentk, ori"));
        assert!(error("oa:garbage=true").contains("no fake for `oa`"));
        assert!(error("ori:retired=maybe").contains("404, 410, 502, html or off"));
        let ok: PlatformFault = "tk:latency-ms=5".parse().unwrap();
        assert_eq!(
            ok,
            PlatformFault {
                platform: crate::tk::PLATFORM,
                setting: FakeSetting::Common(FaultSetting::Latency(Duration::from_millis(5))),
            }
        );
    }

    #[test]
    fn an_unknown_name_lists_the_common_names_and_the_fakes_own() {
        let error = |text: &str| text.parse::<PlatformFault>().unwrap_err().to_string();
        let common = FaultSetting::NAMES.join(", ");
        assert_eq!(
            error("tk:slow=1"),
            format!("unknown fault `slow`; one of {common}"),
            "the Tweede Kamer has nothing of its own"
        );
        assert_eq!(
            error("ori:slow=1"),
            format!("unknown fault `slow`; one of {common}, retired")
        );
        assert_eq!(
            error("opentk:slow=1"),
            format!("unknown fault `slow`; one of {common}, busy")
        );
        // A fake's own name is its own: no other fake takes it.
        assert!(error("tk:busy=true").contains("unknown fault `busy`"));
        assert!(error("obv:retired=410").contains("unknown fault `retired`"));
        let common_only = "busy=true".parse::<FaultSetting>().unwrap_err().to_string();
        assert_eq!(common_only, format!("unknown fault `busy`; one of {common}"));
    }
}
