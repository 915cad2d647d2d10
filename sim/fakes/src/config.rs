//! What a fake platform does: its faults and, for OpenBesluitvorming, its limit; and the
//! textual form of one fault setting (`obv:fail-every=2`), as `besluitbron-sim fakes
//! --fault` takes it.
//!
//! Invariants: the default configuration is a healthy platform (no fault on, the real
//! platform's limit), and every field can be changed while the fake runs
//! ([`FakeHandle::update`](crate::FakeHandle::update)); the next request sees the change.
//! A fault setting is parsed whole into a typed value before anything is applied, so a
//! bad one changes nothing.
//!
//! What this module does not do: apply the faults (see `faults.rs`) or keep counters.

use std::str::FromStr;
use std::time::Duration;

use besluitbron_core::{PlatformId, Units};

/// How OpenBesluitvorming's fake weighs a search (PLATFORMS.md §2 documents two formulas).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ObvCost {
    /// The code of 2026-08-21: `max(1, ceil(limit / 24))`, so `limit=100` costs 5.
    #[default]
    Code,
    /// The later API.md revision: `1 + (limit - 24) / 250` (exact thousandths), so
    /// `limit=100` costs 1.304.
    Doc,
}

impl ObvCost {
    /// The cost of one search with this (already capped) `limit`.
    pub fn search_cost(self, limit: u32) -> Units {
        match self {
            ObvCost::Code => Units::whole(u64::from(limit.div_ceil(24).max(1))),
            ObvCost::Doc => Units::from_milli(1000 + u64::from(limit.saturating_sub(24)) * 1000 / 250),
        }
    }
}

/// How a switched-off platform answers (Open Raadsinformatie since 1 November 2026).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retired {
    /// 404 with an HTML page (a web server without the API behind it).
    NotFound,
    /// 410 Gone.
    Gone,
    /// 502 Bad Gateway (a proxy whose backend is gone).
    BadGateway,
    /// 200 with an HTML page saying the service ended.
    Html,
}

/// The behaviour of one fake platform; change it while running with [`FakeHandle::update`](crate::FakeHandle::update).
///
/// Every fault is off by default. The faults of an answer (`latency`, `fail_every`,
/// `garbage`) model a platform that works but badly; the faults of arrival (`stall`,
/// `reset_every`, `rate_limit_storm`) model one that does not, and strike before the
/// platform looks at the request, so they charge nothing to OpenBesluitvorming's bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// OpenBesluitvorming only: bucket capacity, refilled over one minute (default 60).
    pub rate_limit_per_min: u32,
    /// OpenBesluitvorming only: which search-cost formula the bucket charges.
    pub obv_cost: ObvCost,
    /// Officiële Bekendmakingen only: answer every n-th search (counted from the fake's
    /// start, among searches whose query parsed) as the service signals overload: 200
    /// with a system diagnostic and no count. `None` never.
    pub ob_overload_every: Option<u32>,
    /// Officiële Bekendmakingen only: answer every n-th search (counted likewise) with
    /// its count but no records, an empty page before the end. `None` never.
    pub ob_empty_page_every: Option<u32>,
    /// Open Raadsinformatie only: answer every request as the switched-off platform
    /// does, in this shape; `None`: the live Elasticsearch API.
    pub retired: Option<Retired>,
    /// OpenTK only: searches are cut short by the platform's time budget (as under
    /// load): a few hits and `milliseconds` close to the 2-second budget.
    pub busy: bool,
    /// A platform gone wrong in size: answer every accepted request with a 200 of this
    /// many bytes, made as it is sent (the fake holds one 64 KiB chunk, whatever the
    /// size), so a test sees how much a client actually read
    /// ([`FakeHandle::oversize_bytes_sent`](crate::FakeHandle::oversize_bytes_sent)).
    /// `None` never.
    pub oversize: Option<Oversize>,
    /// OpenBesluitvorming only: hostile platform data — every search hit's title carries
    /// HTML markup with a `<script>`, and its download link is a `javascript:` URL (for
    /// the search page's escaping tests).
    pub hostile_titles: bool,
}

/// An answer larger than any client should read ([`FakeConfig::oversize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oversize {
    /// The body's size in bytes.
    pub bytes: u64,
    /// Announce the size in `Content-Length` (else the body is chunked, size unknown).
    pub announce_length: bool,
}

impl Default for FakeConfig {
    fn default() -> FakeConfig {
        FakeConfig {
            latency: Duration::ZERO,
            fail_every: None,
            garbage: false,
            reset_every: None,
            stall: None,
            rate_limit_storm: false,
            rate_limit_per_min: 60,
            obv_cost: ObvCost::Code,
            retired: None,
            busy: false,
            oversize: None,
            ob_overload_every: None,
            ob_empty_page_every: None,
            hostile_titles: false,
        }
    }
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
    /// `retired=404|410|502|html|off` (Open Raadsinformatie).
    Retired(Option<Retired>),
    /// `busy=BOOL` (OpenTK).
    Busy(bool),
}

impl FaultSetting {
    /// Every `NAME` a setting may have, in the order of the table above.
    pub const NAMES: [&'static str; 8] = [
        "latency-ms",
        "stall-ms",
        "fail-every",
        "reset-every",
        "garbage",
        "rate-limit-storm",
        "retired",
        "busy",
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
            FaultSetting::Retired(shape) => config.retired = shape,
            FaultSetting::Busy(on) => config.busy = on,
        }
    }
}

/// A fault setting that cannot be parsed, with the reason (meant to be shown as is).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FaultParseError(String);

impl FromStr for FaultSetting {
    type Err = FaultParseError;

    fn from_str(text: &str) -> Result<FaultSetting, FaultParseError> {
        let bad = |why: String| Err(FaultParseError(why));
        let Some((name, value)) = text.split_once('=') else {
            return bad(format!("`{text}` is not NAME=VALUE"));
        };
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| FaultParseError(format!("{name} takes a whole number, not `{value}`")))
        };
        let count = || {
            let n = number()?;
            let n = u32::try_from(n).map_err(|_| FaultParseError(format!("{name}: {n} is too large")))?;
            Ok::<_, FaultParseError>((n > 0).then_some(n))
        };
        let flag = || match value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(FaultParseError(format!("{name} takes true or false, not `{value}`"))),
        };
        Ok(match name {
            "latency-ms" => FaultSetting::Latency(Duration::from_millis(number()?)),
            "stall-ms" => FaultSetting::Stall(Some(Duration::from_millis(number()?)).filter(|d| !d.is_zero())),
            "fail-every" => FaultSetting::FailEvery(count()?),
            "reset-every" => FaultSetting::ResetEvery(count()?),
            "garbage" => FaultSetting::Garbage(flag()?),
            "rate-limit-storm" => FaultSetting::RateLimitStorm(flag()?),
            "busy" => FaultSetting::Busy(flag()?),
            "retired" => FaultSetting::Retired(match value {
                "404" => Some(Retired::NotFound),
                "410" => Some(Retired::Gone),
                "502" => Some(Retired::BadGateway),
                "html" => Some(Retired::Html),
                "off" => None,
                _ => return bad(format!("retired takes 404, 410, 502, html or off, not `{value}`")),
            }),
            _ => {
                return bad(format!(
                    "unknown fault `{name}`; one of {}",
                    FaultSetting::NAMES.join(", ")
                ));
            }
        })
    }
}

/// A fault setting for one fake of the registry, parsed from `PLATFORM:NAME=VALUE`
/// (e.g. `obv:fail-every=2`, `tk:latency-ms=200`, `obv:rate-limit-storm=true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlatformFault {
    /// A platform the [`REGISTRY`](crate::REGISTRY) has a fake for.
    pub platform: PlatformId,
    /// What to set in its configuration.
    pub setting: FaultSetting,
}

impl FromStr for PlatformFault {
    type Err = FaultParseError;

    fn from_str(text: &str) -> Result<PlatformFault, FaultParseError> {
        let fakes = || {
            crate::REGISTRY
                .iter()
                .map(|e| e.platform().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((platform, setting)) = text.split_once(':') else {
            return Err(FaultParseError(format!("`{text}` is not PLATFORM:NAME=VALUE")));
        };
        let platform = platform
            .parse::<PlatformId>()
            .ok()
            .filter(|&p| crate::entry(p).is_some())
            .ok_or_else(|| FaultParseError(format!("no fake for `{platform}`; one of {}", fakes())))?;
        Ok(PlatformFault {
            platform,
            setting: setting.parse()?,
        })
    }
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
            ("retired=410", FaultSetting::Retired(Some(Retired::Gone))),
            ("busy=true", FaultSetting::Busy(true)),
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
            retired: Some(Retired::Gone),
            busy: true,
            ..FakeConfig::default()
        };
        assert_eq!(config, expected);
        // Every name in NAMES parses with some value.
        for name in FaultSetting::NAMES {
            let value = match name {
                "garbage" | "rate-limit-storm" | "busy" => "false",
                "retired" => "off",
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
                platform: PlatformId::Tk,
                setting: FaultSetting::Latency(Duration::from_millis(5)),
            }
        );
    }

    #[test]
    fn both_cost_formulas_match_platforms_md() {
        assert_eq!(ObvCost::Code.search_cost(100), Units::whole(5));
        assert_eq!(ObvCost::Code.search_cost(24), Units::whole(1));
        assert_eq!(ObvCost::Code.search_cost(25), Units::whole(2));
        assert_eq!(ObvCost::Code.search_cost(1), Units::whole(1));
        assert_eq!(ObvCost::Doc.search_cost(100), Units::from_milli(1304));
        assert_eq!(ObvCost::Doc.search_cost(10), Units::whole(1));
    }
}
