//! [`FakeHandle`]: a running fake's address, counters and run-time controls — the faults
//! every fake applies ([`FakeHandle::update`]), the fake's own settings, typed by the
//! caller with the type the fake's module declares ([`FakeHandle::update_own`]), and
//! settings in their textual form ([`FakeHandle::apply`]).
//!
//! Invariants: a handle never owns the server — dropping it leaves the fake running — and
//! every change made through it is seen by the next request.
//!
//! What this module does not do: start a fake (see `registry.rs`).

use std::any::type_name;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use besluitbron_core::{PlatformId, Units};
use tokio::task::AbortHandle;

use crate::config::{FakeConfig, Oversize, PlatformFault};
use crate::hostile::HostileBody;
use crate::own::OwnSettings;
use crate::shared::FakeShared;

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
    /// The handle of a fake served by the listener task `task` at `local_addr`.
    pub(crate) fn new(
        platform: PlatformId,
        local_addr: SocketAddr,
        base_url: String,
        shared: Arc<FakeShared>,
        task: AbortHandle,
    ) -> FakeHandle {
        FakeHandle {
            platform,
            local_addr,
            base_url,
            shared,
            task,
        }
    }

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

    /// Requests refused with 429: the caller's bucket was empty (OpenBesluitvorming), or
    /// a rate-limit storm was on ([`FakeConfig::rate_limit_storm`]).
    pub fn rate_limited(&self) -> u64 {
        self.shared.rate_limited.load(Ordering::Relaxed)
    }

    /// Of [`FakeHandle::rate_limited`], the 429s a rate-limit storm sent: the rest were
    /// the platform's own limit refusing a caller whose bucket was empty.
    pub fn storm_rate_limited(&self) -> u64 {
        self.shared.storm_rate_limited.load(Ordering::Relaxed)
    }

    /// Requests answered with a deliberate 500 (see [`FakeConfig::fail_every`]).
    pub fn failures_injected(&self) -> u64 {
        self.shared.failures_injected.load(Ordering::Relaxed)
    }

    /// Requests whose connection was dropped without an answer (see [`FakeConfig::reset_every`]).
    pub fn connections_reset(&self) -> u64 {
        self.shared.connections_reset.load(Ordering::Relaxed)
    }

    /// Requests held on arrival (see [`FakeConfig::stall`]), counted when the hold begins.
    pub fn stalled(&self) -> u64 {
        self.shared.stalled.load(Ordering::Relaxed)
    }

    /// Units charged to all callers' buckets together (0 for platforms without a limit).
    pub fn units_charged(&self) -> Units {
        Units::from_milli(self.shared.units_charged_milli.load(Ordering::Relaxed))
    }

    /// Bytes of oversized bodies handed to connections so far (see
    /// [`FakeConfig::oversize`]): what a client that stops at its cap let through.
    pub fn oversize_bytes_sent(&self) -> u64 {
        self.shared.oversize_sent.load(Ordering::SeqCst)
    }

    /// Oversized bodies still being sent: 0 once every client hung up or read to the end.
    pub fn oversize_bodies_open(&self) -> u64 {
        self.shared.oversize_open.load(Ordering::SeqCst)
    }

    /// The path and query of the last requests received (at most 64), oldest first,
    /// as they arrived (still percent-encoded).
    pub fn recent_paths(&self) -> Vec<String> {
        self.shared.recent_paths()
    }

    /// The headers of the last requests (as many as [`FakeHandle::recent_paths`] keeps),
    /// oldest first, each request's as `name: value` lines.
    pub fn recent_headers(&self) -> Vec<String> {
        self.shared.recent_headers()
    }

    /// Full answers of a resource that carries an `ETag` (bodies sent, not 304s).
    pub fn downloads(&self) -> u64 {
        self.shared.downloads.load(Ordering::Relaxed)
    }

    /// 304 answers to a matching `If-None-Match` (no body sent).
    pub fn not_modified(&self) -> u64 {
        self.shared.not_modified.load(Ordering::Relaxed)
    }

    /// Requests whose body the platform could not read as it reads bodies (an
    /// urlencoded search to OpenTK, which reads multipart only).
    pub fn unreadable_bodies(&self) -> u64 {
        self.shared.unreadable_bodies.load(Ordering::Relaxed)
    }

    /// A copy of the current configuration (the faults every fake applies).
    pub fn config(&self) -> FakeConfig {
        self.shared.config()
    }

    /// Changes the configuration while the fake runs; the next request sees the change.
    pub fn update(&self, change: impl FnOnce(&mut FakeConfig)) {
        change(&mut self.shared.settings().common);
    }

    /// A copy of this fake's own settings, of the type its module declares
    /// (`handle.own::<ObvSettings>()`).
    ///
    /// Panics when `S` is not that type (asking the Tweede Kamer's fake for
    /// [`ObvSettings`](crate::ObvSettings) is a bug of the test).
    pub fn own<S: OwnSettings>(&self) -> S {
        let settings = self.shared.settings();
        match settings.own::<S>() {
            Some(own) => own.clone(),
            None => self.wrong_type::<S>(settings.own_type()),
        }
    }

    /// Changes this fake's own settings while it runs
    /// (`handle.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 6)`); the next
    /// request sees the change.
    ///
    /// Panics when `S` is not the type the fake's module declares.
    pub fn update_own<S: OwnSettings>(&self, change: impl FnOnce(&mut S)) {
        let mut settings = self.shared.settings();
        let own_type = settings.own_type();
        match settings.own_mut::<S>() {
            Some(own) => change(own),
            None => self.wrong_type::<S>(own_type),
        }
    }

    /// Applies the settings of `faults` that are for this fake's platform, in order and
    /// under one lock (the next request sees all of them); the others are skipped.
    pub fn apply(&self, faults: &[PlatformFault]) {
        let mine = faults.iter().filter(|f| f.platform == self.platform);
        self.shared.apply(mine.map(|f| &f.setting));
    }

    fn wrong_type<S>(&self, own_type: &str) -> ! {
        panic!(
            "the {} fake's own settings are `{own_type}`, not `{}`",
            self.platform,
            type_name::<S>()
        )
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

    /// Drops the connection without an answer on every n-th request received from now on,
    /// counted from the fake's start (`None`: never).
    pub fn set_reset_every(&self, reset_every: Option<u32>) {
        self.update(|c| c.reset_every = reset_every);
    }

    /// Holds every request this long on arrival from now on (`None`: never).
    pub fn set_stall(&self, stall: Option<Duration>) {
        self.update(|c| c.stall = stall);
    }

    /// Answers every request 429 with `Retry-After: 1` (or stops doing so).
    pub fn set_rate_limit_storm(&self, storm: bool) {
        self.update(|c| c.rate_limit_storm = storm);
    }

    /// Answers every accepted request with an oversized body (or stops doing so).
    pub fn set_oversize(&self, oversize: Option<Oversize>) {
        self.update(|c| c.oversize = oversize);
    }

    /// Answers every accepted request with a hostile answer from now on (`None`: stops).
    pub fn set_hostile(&self, hostile: Option<HostileBody>) {
        self.update(|c| c.hostile = hostile);
    }

    /// Requests that arrived under another host name ([`crate::OFF_HOST`]): a client
    /// that followed a [`crate::HostileBody::RedirectOffHost`].
    pub fn off_host_arrivals(&self) -> u64 {
        self.shared.off_host_arrivals.load(Ordering::SeqCst)
    }

    /// Stops serving; connections are refused once the listener task has ended.
    pub fn stop(&self) {
        self.task.abort();
    }
}
