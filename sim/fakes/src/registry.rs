//! The registry: one table of every fake platform, and the functions that serve them.
//!
//! Adding a fake is its module plus one line in [`REGISTRY`]:
//! `FakeEntry::of::<module::Fake>(platform, prefix, base_suffix, probe_path)` — the fake
//! (a type of its module with [`FakePlatform`]: its routes and the type of its own
//! settings), its platform, its path prefix on the shared listener, the base-URL suffix a
//! client uses, and a path it answers with 200. Everything else — the combined router of
//! [`serve_registry_on`], the handles, the textual form of the fake's own settings
//! (`ori:retired=html`, parsed by the fake through its line), the printed base URLs of
//! `besluitbron-sim fakes`, the tests over every entry — follows from the table.
//!
//! A fake's own settings live in its module, as an [`OwnSettings`] type
//! (`obv::ObvSettings`, …; `()` for none) that its [`FakePlatform::Own`] names; shared
//! code names no fake and no fake's setting.
//!
//! Invariants:
//! - Platforms and prefixes are unique in the table (a test checks it), so
//!   [`Fakes::get`] finds at most one handle and no fake's routes shadow another's.
//! - [`Fakes`] and every `Vec` of handles or base URLs keep table order.
//! - A fake's base URL is `http://ADDR` + prefix + suffix on the shared listener, and
//!   `http://ADDR` + suffix when it is served alone.
//! - A fake's own settings are made for the type its line names, and its routes get them
//!   typed as that same type ([`FakePlatform::router`]): the compiler keeps the line and
//!   the fake in agreement.
//!
//! What this module does not do: configure the fakes (they start with
//! [`FakeConfig::default`] and their own settings' defaults; change them through their
//! handles) or bind an address it was not given.

use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;

use axum::Router;
use besluitbron_core::PlatformId;
use tokio::net::TcpListener;

use crate::config::{FakeConfig, FakeSetting, FaultSetting, PlatformFault, unknown};
use crate::corpus::CorpusError;
use crate::fake::FakePlatform;
use crate::handle::FakeHandle;
use crate::own::{OwnSetting, OwnSettings};
use crate::serve::spawn_router;
use crate::setting_text::{FaultParseError, name_value};
use crate::shared::{FakeShared, Shared};
use crate::{bwb, control, cvdr, eurlex, ob, obv, opentk, ori, real, rechtspraak, tk};

/// One fake platform in the [`REGISTRY`].
#[derive(Debug)]
pub struct FakeEntry {
    platform: PlatformId,
    prefix: &'static str,
    base_suffix: &'static str,
    probe_path: &'static str,
    /// Makes the fake's shared state (with this configuration and its own settings'
    /// defaults) and its routes for this base URL, once the real files it serves are read;
    /// without them, the error names what is missing.
    start: fn(FakeConfig, String) -> Result<Started, CorpusError>,
    /// The names of the fake's own settings ([`OwnSettings::NAMES`]).
    own_names: &'static [&'static str],
    /// Parses one of the fake's own settings ([`OwnSettings::parse`]).
    parse_own: fn(&str, &str) -> Option<Result<OwnSetting, FaultParseError>>,
}

/// Every fake platform, in the order they are served, printed and returned.
pub static REGISTRY: &[FakeEntry] = &[
    FakeEntry::of::<obv::Fake>(obv::PLATFORM, "/obv", "", "/api/sources"),
    FakeEntry::of::<tk::Fake>(tk::PLATFORM, "/tk", tk::ODATA_PREFIX, "/Fractie"),
    FakeEntry::of::<rechtspraak::Fake>(
        rechtspraak::PLATFORM,
        "/rechtspraak",
        "",
        "/Waardelijst/Proceduresoorten",
    ),
    FakeEntry::of::<opentk::Fake>(opentk::PLATFORM, "/opentk", opentk::PREFIX, "/lastupdates"),
    FakeEntry::of::<ori::Fake>(ori::PLATFORM, "/ori", ori::PREFIX, "/_aliases"),
    FakeEntry::of::<ob::Fake>(ob::PLATFORM, "/ob", ob::SRU_PATH, "/"),
    FakeEntry::of::<bwb::Fake>(bwb::PLATFORM, "/bwb", bwb::SRU_PATH, "/"),
    FakeEntry::of::<cvdr::Fake>(cvdr::PLATFORM, "/cvdr", cvdr::SRU_PATH, "/"),
    FakeEntry::of::<eurlex::Fake>(eurlex::PLATFORM, "/eurlex", "", eurlex::SPARQL_PATH),
];

/// A started fake: the state it shares with its handle, and its routes.
type Started = (Arc<FakeShared>, Router);

/// Makes the shared state and the routes of the fake `F` (see [`FakeEntry::start`]).
fn start<F: FakePlatform>(config: FakeConfig, base_url: String) -> Result<Started, CorpusError> {
    for folder in F::CORPUS {
        real::load(folder)?;
    }
    let shared = Shared::<F::Own>::new(config);
    Ok((Arc::clone(shared.erased()), F::router(shared, base_url)))
}

/// A fake that cannot start for want of its real files, as the I/O error the serving
/// functions answer (its message names the files).
fn refused(error: CorpusError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotFound, error)
}

impl FakeEntry {
    /// The line of the fake `F`.
    const fn of<F: FakePlatform>(
        platform: PlatformId,
        prefix: &'static str,
        base_suffix: &'static str,
        probe_path: &'static str,
    ) -> FakeEntry {
        FakeEntry {
            platform,
            prefix,
            base_suffix,
            probe_path,
            start: start::<F>,
            own_names: <F::Own as OwnSettings>::NAMES,
            parse_own: OwnSetting::parse::<F::Own>,
        }
    }

    /// The platform this fake imitates.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// Where the fake's routes live on the shared listener (`/obv`); starts with `/`.
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// What follows the prefix in the base URL a client is given (`""` for
    /// OpenBesluitvorming, `/OData/v4/2.0` for the Tweede Kamer).
    pub fn base_suffix(&self) -> &'static str {
        self.base_suffix
    }

    /// A path under the base URL that a healthy fake answers with 200 (a cheap read).
    pub fn probe_path(&self) -> &'static str {
        self.probe_path
    }

    /// The names of the fake's own settings in the textual form (`retired` for Open
    /// Raadsinformatie), besides the common [`FaultSetting::NAMES`](crate::FaultSetting::NAMES).
    pub fn own_names(&self) -> &'static [&'static str] {
        self.own_names
    }

    /// Parses `name=value` as one of the fake's own settings; `None` when it has no
    /// setting called `name`.
    pub(crate) fn parse_own(&self, name: &str, value: &str) -> Option<Result<OwnSetting, FaultParseError>> {
        (self.parse_own)(name, value)
    }

    /// Serves this fake alone at the root of `listener` (base URL `http://ADDR` + suffix)
    /// with `config` and its own settings' defaults; it runs until the runtime ends or it is
    /// stopped.
    pub async fn serve_alone_on(&self, listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
        let base_url = format!("http://{}{}", listener.local_addr()?, self.base_suffix);
        let (shared, router) = (self.start)(config, base_url.clone()).map_err(refused)?;
        let (local_addr, task) = spawn_router(listener, router)?;
        Ok(FakeHandle::new(self.platform, local_addr, base_url, shared, task))
    }
}

/// The registry entry of `platform`, if a fake imitates it.
pub fn entry(platform: PlatformId) -> Option<&'static FakeEntry> {
    REGISTRY.iter().find(|e| e.platform == platform)
}

/// The fakes of the [`REGISTRY`] running on one listener.
///
/// They share the listener task, so [`Fakes::stop`] (or [`FakeHandle::stop`] on any of
/// them) stops them all; their configurations and counters are separate.
#[derive(Debug, Clone)]
pub struct Fakes {
    local_addr: SocketAddr,
    handles: Vec<FakeHandle>,
}

impl Fakes {
    /// The fake imitating `platform`, if the registry has one.
    pub fn get(&self, platform: PlatformId) -> Option<&FakeHandle> {
        self.handles.iter().find(|h| h.platform() == platform)
    }

    /// The handles in registry order.
    pub fn iter(&self) -> std::slice::Iter<'_, FakeHandle> {
        self.handles.iter()
    }

    /// Each platform with the base URL a client should use, in registry order.
    pub fn base_urls(&self) -> Vec<(PlatformId, String)> {
        self.handles
            .iter()
            .map(|h| (h.platform(), h.base_url().to_owned()))
            .collect()
    }

    /// The address the shared listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops serving every fake (they share one listener task).
    pub fn stop(&self) {
        for handle in &self.handles {
            handle.stop();
        }
    }

    /// The handles in registry order.
    pub fn into_handles(self) -> Vec<FakeHandle> {
        self.handles
    }
}

impl<'a> IntoIterator for &'a Fakes {
    type Item = &'a FakeHandle;
    type IntoIter = std::slice::Iter<'a, FakeHandle>;

    fn into_iter(self) -> Self::IntoIter {
        self.handles.iter()
    }
}

/// Serves every fake of the [`REGISTRY`] on one listener, each under its prefix, with
/// default configurations, and the control route under [`CONTROL_PREFIX`](crate::CONTROL_PREFIX)
/// (faults switched and counters read over HTTP, loopback peers only); the servers run
/// until the runtime ends or they are stopped.
pub async fn serve_registry_on(listener: TcpListener) -> std::io::Result<Fakes> {
    let addr = listener.local_addr()?;
    let mut router = Router::new();
    let mut parts = Vec::with_capacity(REGISTRY.len());
    for entry in REGISTRY {
        let base_url = format!("http://{addr}{}{}", entry.prefix, entry.base_suffix);
        let (shared, routes) = (entry.start)(FakeConfig::default(), base_url.clone()).map_err(refused)?;
        router = router.nest(entry.prefix, routes);
        parts.push((entry.platform, base_url, shared));
    }
    let control = parts
        .iter()
        .map(|(platform, _, shared)| (*platform, shared.clone()))
        .collect();
    router = router.nest(control::CONTROL_PREFIX, control::router(control));
    let (local_addr, task) = spawn_router(listener, router)?;
    let handles = parts
        .into_iter()
        .map(|(platform, base_url, shared)| FakeHandle::new(platform, local_addr, base_url, shared, task.clone()))
        .collect();
    Ok(Fakes { local_addr, handles })
}

/// Serves every fake on one listener (see [`serve_registry_on`]): OpenBesluitvorming at
/// `http://ADDR/obv` and the Tweede Kamer at `http://ADDR/tk/OData/v4/2.0`.
///
/// Returns the handles in registry order (obv, tk, opentk, ori). They share the one listener task, so
/// [`FakeHandle::stop`] on either stops both; their configurations and counters are
/// separate.
pub async fn serve_all_on(listener: TcpListener) -> std::io::Result<Vec<FakeHandle>> {
    Ok(serve_registry_on(listener).await?.into_handles())
}

/// Binds `addr` and serves every fake there (see [`serve_registry_on`]); returns each
/// platform with the base URL a client should use.
pub async fn serve_all(addr: SocketAddr) -> std::io::Result<Vec<(PlatformId, String)>> {
    let listener = TcpListener::bind(addr).await?;
    Ok(serve_registry_on(listener).await?.base_urls())
}

/// Serves the OpenBesluitvorming fake at the root of `listener` (base URL `http://ADDR`).
pub async fn serve_obv(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    serve_alone(obv::PLATFORM, listener, config).await
}

/// Serves the Tweede Kamer fake on `listener`; the base URL is `http://ADDR/OData/v4/2.0`.
pub async fn serve_tk(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    serve_alone(tk::PLATFORM, listener, config).await
}

/// Serves the Officiële Bekendmakingen fake on `listener`; the base URL is `http://ADDR/sru`.
pub async fn serve_ob(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    serve_alone(ob::PLATFORM, listener, config).await
}

/// Serves the Rechtspraak fake on `listener`; the base URL is `http://ADDR`.
pub async fn serve_rechtspraak(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    serve_alone(rechtspraak::PLATFORM, listener, config).await
}

/// Serves the fake of `platform` alone (see [`FakeEntry::serve_alone_on`]).
async fn serve_alone(platform: PlatformId, listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    // The registry always holds the four fakes served alone (a test serves every entry).
    let entry = entry(platform).unwrap_or_else(|| panic!("the {platform} fake is in the registry"));
    entry.serve_alone_on(listener, config).await
}

/// `PLATFORM:NAME=VALUE`: the platform's fake is found in the [`REGISTRY`], and a name that
/// is not a common fault is parsed by that fake through its line.
impl FromStr for PlatformFault {
    type Err = FaultParseError;

    fn from_str(text: &str) -> Result<PlatformFault, FaultParseError> {
        let fakes = || {
            REGISTRY
                .iter()
                .map(|e| e.platform().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((platform, setting)) = text.split_once(':') else {
            return Err(FaultParseError::new(format!("`{text}` is not PLATFORM:NAME=VALUE")));
        };
        let entry = REGISTRY
            .iter()
            .find(|e| e.platform().as_str() == platform)
            .ok_or_else(|| FaultParseError::new(format!("no fake for `{platform}`; one of {}", fakes())))?;
        let (name, value) = name_value(setting)?;
        let setting = match FaultSetting::parse(name, value) {
            Some(common) => FakeSetting::Common(common?),
            None => match entry.parse_own(name, value) {
                Some(own) => FakeSetting::Own(own?),
                None => return Err(unknown(name, entry.own_names())),
            },
        };
        Ok(PlatformFault {
            platform: entry.platform(),
            setting,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn platforms_and_prefixes_are_unique_and_prefixes_are_paths() {
        let platforms: BTreeSet<&str> = REGISTRY.iter().map(|e| e.platform.as_str()).collect();
        let prefixes: BTreeSet<&str> = REGISTRY.iter().map(|e| e.prefix).collect();
        assert_eq!(platforms.len(), REGISTRY.len(), "one entry per platform");
        assert_eq!(prefixes.len(), REGISTRY.len(), "one prefix per fake");
        for e in REGISTRY {
            assert!(
                e.prefix.len() > 1 && e.prefix.starts_with('/') && !e.prefix.ends_with('/'),
                "{}",
                e.prefix
            );
            assert!(
                e.base_suffix.is_empty() || e.base_suffix.starts_with('/'),
                "{}",
                e.base_suffix
            );
            assert!(e.probe_path.starts_with('/'), "{}", e.probe_path);
            assert_eq!(entry(e.platform).map(|found| found.prefix), Some(e.prefix));
        }
    }

    #[test]
    fn every_own_name_is_the_fakes_alone_and_parsed_by_it() {
        for e in REGISTRY {
            for name in e.own_names() {
                assert!(
                    !FaultSetting::NAMES.contains(name),
                    "{}: `{name}` is a common name",
                    e.platform
                );
                assert!(
                    e.parse_own(name, "").is_some(),
                    "{}: `{name}` is listed but its parser does not know it",
                    e.platform
                );
            }
            assert!(e.parse_own("no-such-setting", "1").is_none(), "{}", e.platform);
        }
    }
}
