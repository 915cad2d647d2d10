//! The state a running fake shares with its [`FakeHandle`](crate::FakeHandle) and the
//! control route: [`FakeShared`] — its [`Settings`] (the common [`FakeConfig`] and the
//! fake's own, see `own.rs`) under one lock, its counters and the last requests it saw —
//! and [`Shared<S>`], the same state as the fake itself holds it, with its own settings
//! typed.
//!
//! Invariants:
//! - The common and the own settings sit under one lock: a change is seen by the next
//!   request, and several changes applied together are seen all or none.
//! - Counters only ever go up; the faults (`faults.rs`) and the fakes count events here,
//!   each kind of event once.
//! - A [`Shared<S>`] is made only together with own settings of type `S` (see `own.rs`),
//!   so the fake's typed reads cannot find another type.
//! - At most [`RECENT_PATHS`] requests' paths and headers are kept, the oldest dropped first.
//!
//! What this module does not do: apply a fault (`faults.rs`), know any fake, or serve.

use std::any::{Any, type_name};
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use besluitbron_core::Units;

use crate::config::{FakeConfig, FakeSetting};
use crate::own::OwnSettings;

/// How many requests' paths the arrival layer keeps.
pub(crate) const RECENT_PATHS: usize = 64;

/// What a fake's own settings are stored as: any [`OwnSettings`] type, erased.
trait OwnAny: Any + fmt::Debug + Send {}

impl<T: Any + fmt::Debug + Send> OwnAny for T {}

/// What a running fake does now: the faults every fake applies and the fake's own
/// settings, under the one lock of its [`FakeShared`].
#[derive(Debug)]
pub(crate) struct Settings {
    /// The faults every fake applies.
    pub(crate) common: FakeConfig,
    /// The fake's own settings (an `S: OwnSettings`, named by `own_type`).
    own: Box<dyn OwnAny>,
    own_type: &'static str,
}

impl Default for Settings {
    /// The settings of a healthy fake with nothing of its own.
    fn default() -> Settings {
        Settings::new::<()>(FakeConfig::default())
    }
}

impl Settings {
    /// `common` with the own settings `S` of the healthy real platform.
    pub(crate) fn new<S: OwnSettings>(common: FakeConfig) -> Settings {
        Settings {
            common,
            own: Box::new(S::default()),
            own_type: type_name::<S>(),
        }
    }

    /// The fake's own settings, if they are an `S`.
    pub(crate) fn own<S: OwnSettings>(&self) -> Option<&S> {
        let own: &dyn Any = &*self.own;
        own.downcast_ref::<S>()
    }

    /// The fake's own settings to change, if they are an `S`.
    pub(crate) fn own_mut<S: OwnSettings>(&mut self) -> Option<&mut S> {
        let own: &mut dyn Any = &mut *self.own;
        own.downcast_mut::<S>()
    }

    /// The name of the own settings' type (for messages).
    pub(crate) fn own_type(&self) -> &'static str {
        self.own_type
    }

    /// Applies one parsed setting.
    ///
    /// Panics when `setting` is another fake's own setting: a [`PlatformFault`](crate::PlatformFault)
    /// applied to a fake of another platform is a bug of the caller.
    pub(crate) fn apply(&mut self, setting: &FakeSetting) {
        match setting {
            FakeSetting::Common(fault) => fault.apply(&mut self.common),
            FakeSetting::Own(own) => own.apply_to(&mut *self.own, self.own_type),
        }
    }
}

/// State shared between a running fake and its [`FakeHandle`](crate::FakeHandle).
#[derive(Debug, Default)]
pub(crate) struct FakeShared {
    settings: Mutex<Settings>,
    pub(crate) requests: AtomicU64,
    /// Requests the platform accepted, counted by the inner fault layer (`faults.rs`).
    pub(crate) passed: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) storm_rate_limited: AtomicU64,
    pub(crate) failures_injected: AtomicU64,
    pub(crate) units_charged_milli: AtomicU64,
    pub(crate) connections_reset: AtomicU64,
    pub(crate) stalled: AtomicU64,
    /// Bytes of oversized bodies handed to the connection so far.
    pub(crate) oversize_sent: AtomicU64,
    /// Oversized bodies being sent now (not yet finished or dropped).
    pub(crate) oversize_open: AtomicU64,
    recent_paths: Mutex<VecDeque<String>>,
    /// The headers of the last requests, each request's as `name: value` lines: what a
    /// client sent besides its path (a test checks that no credential of its own callers
    /// ever reaches a platform).
    recent_headers: Mutex<VecDeque<String>>,
    /// Full answers of a resource that carries an `ETag` (bodies sent).
    pub(crate) downloads: AtomicU64,
    /// 304 answers to a matching `If-None-Match` (no body sent).
    pub(crate) not_modified: AtomicU64,
    /// Requests whose body the platform could not read the way it reads bodies (e.g.
    /// an urlencoded search sent to OpenTK, which reads multipart only).
    pub(crate) unreadable_bodies: AtomicU64,
    /// Requests that arrived under [`crate::OFF_HOST`]: a client that followed a
    /// hostile redirect to another host.
    pub(crate) off_host_arrivals: AtomicU64,
    /// Answers replaced by [`FakeConfig::garbage`].
    pub(crate) garbage_answers: AtomicU64,
    /// Answers replaced by [`FakeConfig::hostile`].
    pub(crate) hostile_answers: AtomicU64,
}

impl FakeShared {
    pub(crate) fn new(settings: Settings) -> FakeShared {
        FakeShared {
            settings: Mutex::new(settings),
            ..FakeShared::default()
        }
    }

    /// The fake's settings, locked: what the next request will see.
    pub(crate) fn settings(&self) -> MutexGuard<'_, Settings> {
        // A panic while holding this lock can only come from a bug in a test closure;
        // the settings themselves are always valid, so recover them.
        self.settings.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A copy of the common configuration now.
    pub(crate) fn config(&self) -> FakeConfig {
        self.settings().common.clone()
    }

    /// Applies `settings` in order under one lock, so a request sees all of them or none.
    /// Panics on another fake's own setting (see [`Settings::apply`]).
    pub(crate) fn apply<'a>(&self, settings: impl IntoIterator<Item = &'a FakeSetting>) {
        let mut current = self.settings();
        for setting in settings {
            current.apply(setting);
        }
    }

    /// Keeps `path_and_query` as the newest of the [`RECENT_PATHS`].
    pub(crate) fn record_path(&self, path_and_query: &str) {
        let mut paths = self.recent_paths.lock().unwrap_or_else(|p| p.into_inner());
        if paths.len() == RECENT_PATHS {
            paths.pop_front();
        }
        paths.push_back(path_and_query.to_owned());
    }

    /// Keeps `headers` as the newest of the last [`RECENT_PATHS`] requests' headers.
    pub(crate) fn record_headers(&self, headers: &axum::http::HeaderMap) {
        let text: String = headers
            .iter()
            .map(|(name, value)| format!("{name}: {}\n", String::from_utf8_lossy(value.as_bytes())))
            .collect();
        let mut recent = self.recent_headers.lock().unwrap_or_else(|p| p.into_inner());
        if recent.len() == RECENT_PATHS {
            recent.pop_front();
        }
        recent.push_back(text);
    }

    /// The headers of the last requests, oldest first, each as `name: value` lines.
    pub(crate) fn recent_headers(&self) -> Vec<String> {
        let recent = self.recent_headers.lock().unwrap_or_else(|p| p.into_inner());
        recent.iter().cloned().collect()
    }

    /// The paths (with queries) of the last requests, oldest first.
    pub(crate) fn recent_paths(&self) -> Vec<String> {
        let paths = self.recent_paths.lock().unwrap_or_else(|p| p.into_inner());
        paths.iter().cloned().collect()
    }

    pub(crate) fn count_rate_limited(&self) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn charge(&self, cost: Units) {
        self.units_charged_milli.fetch_add(cost.as_milli(), Ordering::Relaxed);
    }
}

/// A fake's [`FakeShared`] as the fake itself holds it: with its own settings typed `S`.
///
/// It dereferences to the [`FakeShared`] (counters, common configuration).
pub(crate) struct Shared<S> {
    shared: Arc<FakeShared>,
    own: PhantomData<fn() -> S>,
}

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Shared<S> {
        Shared {
            shared: Arc::clone(&self.shared),
            own: PhantomData,
        }
    }
}

impl<S: OwnSettings> Shared<S> {
    /// New shared state: `config`, and the own settings `S` of the healthy real platform.
    pub(crate) fn new(config: FakeConfig) -> Shared<S> {
        Shared {
            shared: Arc::new(FakeShared::new(Settings::new::<S>(config))),
            own: PhantomData,
        }
    }

    /// The shared state with the own settings' type erased (for the handle and the
    /// control route).
    pub(crate) fn erased(&self) -> &Arc<FakeShared> {
        &self.shared
    }

    /// A copy of the fake's own settings now.
    pub(crate) fn own(&self) -> S {
        self.snapshot().1
    }

    /// A copy of the common configuration and the own settings, taken together.
    pub(crate) fn snapshot(&self) -> (FakeConfig, S) {
        let settings = self.shared.settings();
        // `new` is the only maker of a `Shared<S>`, and it stored an `S`.
        let own = settings.own::<S>().expect("a Shared<S> holds settings of type S");
        (settings.common.clone(), own.clone())
    }
}

impl<S> Deref for Shared<S> {
    type Target = FakeShared;

    fn deref(&self) -> &FakeShared {
        &self.shared
    }
}
