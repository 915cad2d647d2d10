//! `besluitbron-fakes`: fake platforms over real HTTP. Loopback servers that imitate
//! OpenBesluitvorming ([`obv`]) and the Tweede Kamer OData API ([`tk`]) closely enough
//! that the server's platform clients can be tested against them, that the end-to-end
//! test can drive the real server against them, and that a developer can point a local
//! BesluitBron at them (`besluitbron-sim fakes --listen 127.0.0.1:PORT`).
//!
//! Each fake serves a deterministic corpus generated from a fixed seed (no clock, no
//! ambient randomness), so a test can compute the expected answer from the same data
//! ([`obv::obv_corpus`], [`tk::tk_corpus`]) and compare.
//!
//! Invariants:
//! - Faults are explicit configuration ([`FakeConfig`]): added latency, a 500 on every
//!   n-th request, or a 200 whose body is not JSON. They can be changed while the fake
//!   runs through [`FakeHandle`], so a test can make a platform slow or down mid-run.
//! - Every request is counted; every 429 and every unit charged is counted
//!   ([`FakeHandle::requests`], [`FakeHandle::rate_limited`], [`FakeHandle::units_charged`]),
//!   so a test can assert that BesluitBron never made the platform refuse it.
//! - The fakes only ever bind the address they are given; they never contact anything.
//!
//! What this crate does not do: imitate the five other platforms, the PDF page
//! renderer or OpenBesluitvorming's export feeds, or run in virtual time — these are
//! real tokio servers on the wall clock. The discrete-event simulator's platform models
//! live in `besluitbron-sim`, which knows nothing of HTTP.
//!
//! Layout of [`serve_all`]: one listener, OpenBesluitvorming under the path prefix
//! `/obv` (base URL `http://ADDR/obv`) and the Tweede Kamer under `/tk` (base URL
//! `http://ADDR/tk/OData/v4/2.0`).

pub mod obv;
mod obv_corpus;
mod odata;
pub mod tk;
mod tk_corpus;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, StatusCode, header};
use besluitbron_core::{PlatformId, Units};
use tokio::net::TcpListener;
use tokio::task::AbortHandle;

pub use obv::{ObvCorpus, ObvEntity, ObvSource, obv_corpus, serve_obv};
pub use tk::{TkCorpus, serve_tk, tk_corpus};

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

/// The behaviour of one fake platform; change it while running with [`FakeHandle::update`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeConfig {
    /// Added before every answer (after the rate limit has been applied).
    pub latency: Duration,
    /// Answer HTTP 500 to every n-th request that passes the rate limit; `None` never.
    pub fail_every: Option<u32>,
    /// Answer every request with a 200 whose body is HTML, not JSON.
    pub garbage: bool,
    /// OpenBesluitvorming only: bucket capacity, refilled over one minute (default 60).
    pub rate_limit_per_min: u32,
    /// OpenBesluitvorming only: which search-cost formula the bucket charges.
    pub obv_cost: ObvCost,
}

impl Default for FakeConfig {
    fn default() -> FakeConfig {
        FakeConfig {
            latency: Duration::ZERO,
            fail_every: None,
            garbage: false,
            rate_limit_per_min: 60,
            obv_cost: ObvCost::Code,
        }
    }
}

/// State shared between a running fake and its [`FakeHandle`].
#[derive(Debug, Default)]
pub(crate) struct FakeShared {
    config: Mutex<FakeConfig>,
    requests: AtomicU64,
    passed: AtomicU64,
    rate_limited: AtomicU64,
    failures_injected: AtomicU64,
    units_charged_milli: AtomicU64,
}

impl FakeShared {
    pub(crate) fn new(config: FakeConfig) -> FakeShared {
        FakeShared {
            config: Mutex::new(config),
            ..FakeShared::default()
        }
    }

    pub(crate) fn config(&self) -> MutexGuard<'_, FakeConfig> {
        // A panic while holding this lock can only come from a bug in a test closure;
        // the configuration itself is always valid, so recover it.
        self.config.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_rate_limited(&self) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn charge(&self, cost: Units) {
        self.units_charged_milli.fetch_add(cost.as_milli(), Ordering::Relaxed);
    }

    /// Applies latency and the configured faults to a request that passed the rate
    /// limit: `Some(response)` replaces the real answer.
    pub(crate) async fn faults(&self, failure_body: &'static str) -> Option<Response<Body>> {
        let n = self.passed.fetch_add(1, Ordering::Relaxed) + 1;
        let (latency, fail_every, garbage) = {
            let c = self.config();
            (c.latency, c.fail_every, c.garbage)
        };
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if fail_every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every))) {
            self.failures_injected.fetch_add(1, Ordering::Relaxed);
            return Some(raw_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                failure_body,
            ));
        }
        if garbage {
            return Some(raw_response(
                StatusCode::OK,
                "text/html; charset=utf-8",
                "<html><body>BesluitBron fake platform: this is not JSON</body></html>",
            ));
        }
        None
    }
}

/// A response with a fixed body and content type.
pub(crate) fn raw_response(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response<Body> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    response
}

/// A running fake platform: its address, its counters and its run-time controls.
///
/// Dropping the handle does not stop the server (it runs until the tokio runtime ends
/// or [`FakeHandle::stop`] is called), so a caller may keep only the base URL.
#[derive(Debug, Clone)]
pub struct FakeHandle {
    platform: PlatformId,
    local_addr: SocketAddr,
    base_url: String,
    shared: Arc<FakeShared>,
    task: AbortHandle,
}

impl FakeHandle {
    /// Which platform this fake imitates.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The base URL a platform client should be given (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Requests received, including those refused with 429 and those failed on purpose.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Requests refused with 429 because the caller's bucket was empty.
    pub fn rate_limited(&self) -> u64 {
        self.shared.rate_limited.load(Ordering::Relaxed)
    }

    /// Requests answered with a deliberate 500 (see [`FakeConfig::fail_every`]).
    pub fn failures_injected(&self) -> u64 {
        self.shared.failures_injected.load(Ordering::Relaxed)
    }

    /// Units charged to all callers' buckets together (0 for platforms without a limit).
    pub fn units_charged(&self) -> Units {
        Units::from_milli(self.shared.units_charged_milli.load(Ordering::Relaxed))
    }

    /// A copy of the current configuration.
    pub fn config(&self) -> FakeConfig {
        self.shared.config().clone()
    }

    /// Changes the configuration while the fake runs; the next request sees the change.
    pub fn update(&self, change: impl FnOnce(&mut FakeConfig)) {
        change(&mut self.shared.config());
    }

    /// Sets the latency added before every answer.
    pub fn set_latency(&self, latency: Duration) {
        self.update(|c| c.latency = latency);
    }

    /// Answers 500 on every n-th request from now on (`None`: never).
    pub fn set_fail_every(&self, fail_every: Option<u32>) {
        self.update(|c| c.fail_every = fail_every);
    }

    /// Answers every request with a non-JSON 200 (or stops doing so).
    pub fn set_garbage(&self, garbage: bool) {
        self.update(|c| c.garbage = garbage);
    }

    /// Stops serving; connections are refused once the listener task has ended.
    pub fn stop(&self) {
        self.task.abort();
    }
}

/// Serves `router` on `listener` with the peer address available to handlers.
pub(crate) fn spawn_router(
    platform: PlatformId,
    listener: TcpListener,
    base_url: String,
    shared: Arc<FakeShared>,
    router: Router,
) -> std::io::Result<FakeHandle> {
    let local_addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        // An accept loop only ends with an I/O error on the listener itself; the fake
        // then simply stops answering, which the clients see as "unreachable".
        let _ = axum::serve(listener, service).await;
    });
    Ok(FakeHandle {
        platform,
        local_addr,
        base_url,
        shared,
        task: task.abort_handle(),
    })
}

/// Serves both fakes on one listener: OpenBesluitvorming at `http://ADDR/obv` and the
/// Tweede Kamer at `http://ADDR/tk/OData/v4/2.0`, with default configurations.
///
/// Returns the handles (in the order obv, tk); the servers run until the runtime ends.
/// Both share the one listener task, so [`FakeHandle::stop`] on either stops both;
/// their configurations and counters are separate.
pub async fn serve_all_on(listener: TcpListener) -> std::io::Result<Vec<FakeHandle>> {
    let addr = listener.local_addr()?;
    let obv_shared = Arc::new(FakeShared::new(FakeConfig::default()));
    let tk_shared = Arc::new(FakeShared::new(FakeConfig::default()));
    let obv_base = format!("http://{addr}/obv");
    let tk_base = format!("http://{addr}/tk{}", tk::ODATA_PREFIX);
    let router = Router::new()
        .nest("/obv", obv::router(obv_shared.clone(), obv_base.clone()))
        .nest("/tk", tk::router(tk_shared.clone(), tk_base.clone()));
    let obv = spawn_router(PlatformId::Obv, listener, obv_base, obv_shared, router)?;
    let tk = FakeHandle {
        platform: PlatformId::Tk,
        local_addr: addr,
        base_url: tk_base,
        shared: tk_shared,
        task: obv.task.clone(),
    };
    Ok(vec![obv, tk])
}

/// Binds `addr` and serves both fakes there (see [`serve_all_on`]); returns each
/// platform with the base URL a client should use.
pub async fn serve_all(addr: SocketAddr) -> std::io::Result<Vec<(PlatformId, String)>> {
    let listener = TcpListener::bind(addr).await?;
    let handles = serve_all_on(listener).await?;
    Ok(handles.into_iter().map(|h| (h.platform, h.base_url)).collect())
}

/// SplitMix64: the fakes' deterministic generator (one step per call, no state but the input).
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A deterministic value in `0..n` for the pair (`stream`, `index`).
pub(crate) fn pick(stream: u64, index: u64, n: usize) -> usize {
    debug_assert!(n > 0);
    (mix64(stream.wrapping_mul(0x1000_0000_01B3) ^ index) % n as u64) as usize
}

/// The civil date (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a civil date (inverse of [`civil_from_days`]).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a bare `YYYY-MM-DD` that names a real calendar day.
pub(crate) fn parse_date(text: &str) -> Option<(i64, u32, u32)> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |s: &str| {
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let (y, m, d) = (digits(&text[0..4])?, digits(&text[5..7])?, digits(&text[8..10])?);
    if !(1..=12).contains(&m) || d == 0 {
        return None;
    }
    let y = i64::from(y);
    // A day is real when it survives the round trip through the day count.
    (civil_from_days(days_from_civil(y, m, d)) == (y, m, d)).then_some((y, m, d))
}

/// Percent-encodes a query component: everything but unreserved characters and `$`.
pub(crate) fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'$') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_cost_formulas_match_platforms_md() {
        assert_eq!(ObvCost::Code.search_cost(100), Units::whole(5));
        assert_eq!(ObvCost::Code.search_cost(24), Units::whole(1));
        assert_eq!(ObvCost::Code.search_cost(25), Units::whole(2));
        assert_eq!(ObvCost::Code.search_cost(1), Units::whole(1));
        assert_eq!(ObvCost::Doc.search_cost(100), Units::from_milli(1304));
        assert_eq!(ObvCost::Doc.search_cost(10), Units::whole(1));
    }

    #[test]
    fn dates_round_trip_and_reject_impossible_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2024, 2, 29), days_from_civil(2024, 2, 28) + 1);
        assert_eq!(parse_date("2024-02-29"), Some((2024, 2, 29)));
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_date("2024-13-01"), None);
        assert_eq!(parse_date("2024-1-01"), None);
    }

    #[test]
    fn encoding_keeps_odata_option_names_readable() {
        assert_eq!(encode_component("$filter"), "$filter");
        assert_eq!(encode_component("Datum desc"), "Datum%20desc");
        assert_eq!(encode_component("contains(Titel,'a')"), "contains%28Titel%2C%27a%27%29");
    }
}
