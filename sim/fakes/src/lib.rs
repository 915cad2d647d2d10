//! `besluitbron-fakes`: fake platforms over real HTTP. Loopback servers that imitate
//! every platform BesluitBron serves — OpenBesluitvorming ([`obv`]), the Tweede Kamer
//! OData API ([`tk`]), the Rechtspraak open-data service ([`rechtspraak`]), OpenTK
//! ([`opentk`]), Open Raadsinformatie ([`ori`]), Officiële Bekendmakingen' SRU
//! service ([`ob`]), the Basiswettenbestand ([`bwb`]) and the local regulations of the
//! CVDR ([`cvdr`]) — closely enough
//! that the server's platform clients can be tested against them, that the end-to-end
//! test can drive the real server against them, and that a developer can point a local
//! BesluitBron at them (`besluitbron-sim fakes --listen 127.0.0.1:PORT`).
//!
//! Each fake serves a deterministic corpus generated from a fixed seed (no clock, no
//! ambient randomness), so a test can compute the expected answer from the same data
//! ([`obv::obv_corpus`], [`tk::tk_corpus`]) and compare. Beside it, the fakes of
//! Officiële Bekendmakingen, the Basiswettenbestand, the CVDR, Rechtspraak and the Tweede Kamer
//! serve real files of the corpus kept beside the project ([`corpus`]: where it is, each
//! file checked against `corpus/index.toml`), byte for byte, each found as the platform
//! finds it (`real.rs`); a fake without its files does not start.
//!
//! Invariants:
//! - Faults are explicit configuration ([`FakeConfig`]), all off by default, the same for
//!   every fake: added latency, a 500 on every n-th request, a 200 whose body is not
//!   JSON; and the pathological ones — a stall, a connection dropped without an answer on
//!   every n-th request, a storm of 429s. They can be changed while the fake runs through
//!   [`FakeHandle`], so a test can make a platform slow or down mid-run. Faults strike by
//!   count, never at random.
//! - What one fake does beyond that is its own, declared in its module as an
//!   [`OwnSettings`] type whose default is the healthy real platform ([`ObvSettings`],
//!   [`ObSettings`], [`OriSettings`], [`OpenTkSettings`]) and named by its registry line;
//!   it changes while the fake runs through [`FakeHandle::update_own`] and, in the
//!   textual form `PLATFORM:NAME=VALUE`, through names the fake parses itself
//!   (`ori:retired=html`). No shared module (`config.rs`, `own.rs`, `faults.rs`,
//!   `handle.rs`, `control.rs`, `registry.rs` beyond its table) names a fake's setting.
//! - Every request is counted; every 429, every unit charged and every injected fault is
//!   counted ([`FakeHandle::requests`], [`FakeHandle::rate_limited`] — of which
//!   [`FakeHandle::storm_rate_limited`] a storm sent —
//!   [`FakeHandle::units_charged`], [`FakeHandle::failures_injected`],
//!   [`FakeHandle::connections_reset`], [`FakeHandle::stalled`]), so a test can assert that
//!   BesluitBron never made the platform refuse it.
//! - The fakes only ever bind the address they are given; they never contact anything.
//!
//! What this crate does not do: imitate Open Archivaris (it publishes no interface), the PDF page
//! renderer or OpenBesluitvorming's export feeds, or run in virtual time — these are
//! real tokio servers on the wall clock. The discrete-event simulator's platform models
//! live in `besluitbron-sim`, which knows nothing of HTTP.
//!
//! Layout of [`serve_registry_on`] (and [`serve_all_on`], [`serve_all`]): one listener,
//! every fake of the [`REGISTRY`] under its path prefix — OpenBesluitvorming under `/obv`
//! (base URL `http://ADDR/obv`), the Tweede Kamer under `/tk` (base URL
//! `http://ADDR/tk/OData/v4/2.0`) and Rechtspraak under `/rechtspraak`. [`serve_obv`] and [`serve_tk`] serve one fake alone at
//! the root of a listener of its own.
//!
//! The shared listener also serves a control route under [`CONTROL_PREFIX`]
//! (`/_control/state`, `POST /_control/faults`; loopback peers only), so a process
//! outside the fakes can switch faults and read the counters while they run.
//!
//! Code map: `registry.rs` the table of fakes (one line per fake) and the functions that
//! serve them ([`serve_registry_on`], and [`serve_obv`], [`serve_tk`], [`serve_ob`],
//! [`serve_rechtspraak`] for one fake alone) and the parsing of a [`PlatformFault`], which
//! finds the fake through its line; `control.rs` the control route; `fake.rs`
//! what a fake is to the registry (its `Fake` type: its own settings and its routes);
//! `config.rs` what every fake does alike ([`FakeConfig`]) and the textual form of a
//! setting ([`PlatformFault`]); `own.rs` how a fake's own settings travel
//! ([`OwnSettings`]); `setting_text.rs` what both read a `NAME=VALUE` with (its values,
//! [`FaultParseError`]); `shared.rs` the state a running fake shares with its handle (its
//! settings, common and own under one lock, and counters); `faults.rs` the faults every fake applies and `hostile.rs` its
//! hostile answers; `handle.rs` [`FakeHandle`]; `serve.rs` the accept loop; `sru.rs`
//! KOOP's SRU search service, written once for [`ob`], [`bwb`] and [`cvdr`] (the envelope
//! in both versions, the request's checks, paging, diagnostics and the service's trouble;
//! each of them keeps only its CQL and its records); `regulation.rs` the fake of KOOP's
//! regulation collections written once, over what [`bwb`] and [`cvdr`] each keep (their
//! regulations, CQL, records and files); [`corpus`] where the real files
//! are and each read checked against the catalogue; `real.rs` the folders the fakes serve,
//! read when a fake starts, and the XML reading that describes them; [`obv`], [`tk`], [`rechtspraak`],
//! [`opentk`], [`ori`], [`ob`], [`bwb`] and [`cvdr`] (with their corpora and `odata.rs`)
//! the platforms themselves, each with its own settings.
//!
//! Layers: the registry (and its control route) at the top, the fakes below it, the
//! shared modules below them — no fake imports the registry or another fake, and the
//! shared modules import no fake. Among the shared ones, `shared.rs` sits over `config.rs`,
//! which sits over `own.rs`, and both read their text with `setting_text.rs`, at the
//! bottom. A module imports a name from the module that defines it, never through the
//! re-exports below; the modules form no import cycle, and a tidy test
//! (`tidy/`) reads the sources, sees through the re-exports, and fails on one.

pub mod bwb;
mod config;
mod control;
pub mod corpus;
pub mod cvdr;
pub mod eurlex;
mod fake;
mod faults;
mod handle;
mod hostile;
pub mod ob;
mod ob_chamber;
mod ob_corpus;
mod ob_cql;
mod ob_publication;
pub mod obv;
mod obv_corpus;
mod odata;
pub mod opentk;
pub mod ori;
mod own;
mod real;
pub mod rechtspraak;
mod rechtspraak_corpus;
mod registry;
mod regulation;
mod serve;
mod setting_text;
mod shared;
mod sru;
pub mod tk;
mod tk_corpus;
mod tk_debates;
mod tk_votes;

use axum::body::Body;
use axum::http::{Response, StatusCode, header};
use chrono::{Days, NaiveDate};

pub use config::{FakeConfig, FakeSetting, FaultSetting, Oversize, PlatformFault};
pub use control::CONTROL_PREFIX;
pub use handle::FakeHandle;
pub use hostile::{DEEP_NESTING, HostileBody, OFF_HOST};
pub use ob::{ObCorpus, ObSettings, ob_corpus};
pub use obv::{ObvCorpus, ObvCost, ObvEntity, ObvSettings, ObvSource, obv_corpus};
pub use opentk::OpenTkSettings;
pub use ori::{OriSettings, Retired};
pub use own::{OwnChange, OwnSetting, OwnSettings};
pub use rechtspraak::{RsCorpus, rechtspraak_corpus};
pub use registry::{
    FakeEntry, Fakes, REGISTRY, entry, serve_all, serve_all_on, serve_ob, serve_obv, serve_rechtspraak,
    serve_registry_on, serve_tk,
};
pub use setting_text::FaultParseError;
pub use sru::{SruDiagnostic, ZoekserviceSettings};
pub use tk::{TkCorpus, TkSettings, tk_corpus};

/// A response with a fixed body and content type.
pub(crate) fn raw_response(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response<Body> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    response
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

/// A calendar day the fakes' corpora are built from (a constant in the code: panics only on a
/// typo there).
pub(crate) fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_else(|| panic!("{y}-{m}-{d} is not a day"))
}

/// `first` moved `n` days on.
pub(crate) fn days_after(first: NaiveDate, n: u64) -> NaiveDate {
    first + Days::new(n)
}

/// Parses a bare `YYYY-MM-DD` that names a real calendar day.
pub(crate) fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    let shaped = b.len() == 10
        && b.iter().enumerate().all(|(i, &c)| {
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
    fn dates_round_trip_and_reject_impossible_days() {
        assert_eq!(days_after(day(2024, 2, 28), 1), day(2024, 2, 29));
        assert_eq!(days_after(day(2023, 2, 28), 1), day(2023, 3, 1));
        assert_eq!(parse_date("2024-02-29"), Some(day(2024, 2, 29)));
        assert_eq!(parse_date("+024-02-29"), None);
        assert_eq!(parse_date("2024-02-2 "), None);
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
