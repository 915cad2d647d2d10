//! Platform and service ids as scenarios and traces write them, and what the simulator
//! knows of the real platforms and the upstream services they call (`sim/platforms.toml`).
//!
//! The simulator's platforms are its input's: a scenario's `[[platform]]` list, a trace's
//! lines. Their ids are text; [`platform`] turns one into the core's [`PlatformId`] and
//! [`service`] one into a [`ServiceId`], declaring each distinct id once per process. What a
//! platform is like by default — its public name, the services it calls, its random stream —
//! and what a service is like — the limit it enforces, the most calls out at it at once,
//! whether it states its budget — come from `sim/platforms.toml` for the real ones: the
//! server's own declarations, which its tests hold the table to. A platform the table does
//! not know calls a service of its own id; a service the table does not know keeps no limit.
//!
//! Invariants:
//! - one declaration per distinct id per process (ids compare by text, so two calls with
//!   the same id give equal ids; the declarations live as long as the process);
//! - a known platform's stream is the table's, an unknown one's (or a known one listed
//!   without a stream) is derived from its id alone (9–63), so a platform draws the same
//!   whatever else a scenario lists;
//! - every service a known platform names is in the table.
//!
//! What this module does not do: serve or name the server's connectors (the server's
//! registry declares those), or decide limits for a run (a scenario's entries override).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use besluitbron_core::{LimitConfig, Platform, PlatformId, Service, ServiceId, Units};
use serde::{Deserialize, Deserializer};

/// What the simulator knows of one real platform.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// Its short id.
    pub id: String,
    /// Its public name.
    pub name: String,
    /// Its random stream (below 9), fixed for the platforms listed first; a platform
    /// listed without one draws from the stream derived from its id, as an unknown one does
    /// (the fixed streams are all taken, and a derived one never moves another's draws).
    #[serde(default)]
    pub stream: Option<u8>,
    /// The services it calls, by id: its first takes its calls, its second (if any) its
    /// text.
    pub services: Vec<String>,
}

impl Known {
    /// The services it calls.
    pub fn service_ids(&self) -> Vec<ServiceId> {
        // The table's own test reads every id; a broken one is a programmer error.
        self.services
            .iter()
            .map(|s| service(s).unwrap_or_else(|e| panic!("sim/platforms.toml: {e}")))
            .collect()
    }
}

/// What the simulator knows of one upstream service.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownService {
    /// Its short id.
    pub id: String,
    /// What it is, for people.
    pub name: String,
    /// C as it enforces it (and BesluitBron keeps it by default).
    pub capacity: Option<Units>,
    /// W as it enforces it, in seconds.
    pub window_s: Option<f64>,
    /// Most calls queued or out at it at once.
    pub max_in_flight: Option<usize>,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    #[serde(default)]
    pub rate_limit_headers: bool,
}

impl KnownService {
    /// The limit it enforces, if any.
    pub fn limit(&self) -> Option<LimitConfig> {
        limit(self.capacity, self.window_s)
    }
}

fn limit(capacity: Option<Units>, window_s: Option<f64>) -> Option<LimitConfig> {
    Some(LimitConfig::new(capacity?, Duration::from_secs_f64(window_s?)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    service: Vec<KnownService>,
    platform: Vec<Known>,
}

fn whole_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The table is the simulator's own file, compiled in; its test reads it.
        toml::from_str(include_str!("../platforms.toml")).unwrap_or_else(|e| panic!("sim/platforms.toml: {e}"))
    })
}

/// The real platforms the simulator knows, from `sim/platforms.toml`.
pub fn table() -> &'static [Known] {
    &whole_table().platform
}

/// The real upstream services the simulator knows, from `sim/platforms.toml`.
pub fn services_table() -> &'static [KnownService] {
    &whole_table().service
}

/// What the simulator knows of the platform `id`, if it is a real one.
pub fn known(id: PlatformId) -> Option<&'static Known> {
    table().iter().find(|k| k.id == id.as_str())
}

/// What the simulator knows of the service `id`, if it is a real one.
pub fn known_service(id: ServiceId) -> Option<&'static KnownService> {
    services_table().iter().find(|k| k.id == id.as_str())
}

/// The services platform `id` calls by default: the table's, else one of its own id.
pub fn services_of(id: PlatformId) -> Vec<ServiceId> {
    match known(id) {
        Some(k) => k.service_ids(),
        // A platform id is a valid service id (the same alphabet and length).
        None => vec![service(id.as_str()).unwrap_or_else(|e| panic!("{e}"))],
    }
}

/// The streams below this are the table's and those derived from ids.
const STREAMS: u8 = 64;
/// The first stream derived from an id.
const FIRST_DERIVED: u8 = 9;

/// The random stream of platform `id`: the table's, or derived from its id.
pub fn stream(id: PlatformId) -> u8 {
    if let Some(stream) = known(id).and_then(|k| k.stream) {
        return stream;
    }
    // FNV-1a over the id: stable across runs and builds.
    let hash = id.as_str().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    FIRST_DERIVED + u8::try_from(hash % u64::from(STREAMS - FIRST_DERIVED)).unwrap_or(0)
}

/// Whether `id` is a valid id: lower-case letters, digits and `-`, 1 to 32 characters.
fn valid(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 32
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The platform `id` of a scenario or trace: lower-case letters, digits and `-`, 1 to 32
/// characters.
pub fn platform(id: &str) -> Result<PlatformId, String> {
    if !valid(id) {
        return Err(format!(
            "`{id}` is no platform id (lower-case letters, digits and `-`, at most 32)"
        ));
    }
    static DECLARED: OnceLock<Mutex<BTreeMap<String, PlatformId>>> = OnceLock::new();
    let mut declared = DECLARED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(p) = declared.get(id) {
        return Ok(*p);
    }
    let name = table()
        .iter()
        .find(|k| k.id == id)
        .map_or_else(|| id.to_owned(), |k| k.name.clone());
    let declaration: &'static Platform = Box::leak(Box::new(Platform {
        id: String::leak(id.to_owned()),
        name: String::leak(name),
    }));
    let p = PlatformId::of(declaration);
    declared.insert(id.to_owned(), p);
    Ok(p)
}

/// The upstream service `id` of a scenario or the table: lower-case letters, digits and
/// `-`, 1 to 32 characters; declared with the table's name, limit and bound when it is a
/// real one.
pub fn service(id: &str) -> Result<ServiceId, String> {
    if !valid(id) {
        return Err(format!(
            "`{id}` is no service id (lower-case letters, digits and `-`, at most 32)"
        ));
    }
    static DECLARED: OnceLock<Mutex<BTreeMap<String, ServiceId>>> = OnceLock::new();
    let mut declared = DECLARED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(s) = declared.get(id) {
        return Ok(*s);
    }
    let known = services_table().iter().find(|k| k.id == id);
    let declaration: &'static Service = Box::leak(Box::new(Service {
        id: String::leak(id.to_owned()),
        name: String::leak(known.map_or_else(|| id.to_owned(), |k| k.name.clone())),
        limit: known.and_then(KnownService::limit),
        max_in_flight: known.and_then(|k| k.max_in_flight),
    }));
    let s = ServiceId::of(declaration);
    declared.insert(id.to_owned(), s);
    Ok(s)
}

/// Reads a platform id (serde's `deserialize_with`).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PlatformId, D::Error> {
    let text = String::deserialize(d)?;
    platform(&text).map_err(serde::de::Error::custom)
}

/// Reads a service id (serde's `deserialize_with`).
pub fn deserialize_service<'de, D: Deserializer<'de>>(d: D) -> Result<ServiceId, D::Error> {
    let text = String::deserialize(d)?;
    service(&text).map_err(serde::de::Error::custom)
}

/// Reads an optional list of service ids.
pub fn deserialize_services<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<ServiceId>>, D::Error> {
    Option::<Vec<String>>::deserialize(d)?
        .map(|list| {
            list.iter()
                .map(|text| service(text).map_err(serde::de::Error::custom))
                .collect()
        })
        .transpose()
}

/// Reads an optional platform id.
pub fn deserialize_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PlatformId>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| platform(&text).map_err(serde::de::Error::custom))
        .transpose()
}

/// Reads a table of weights keyed by platform ids, in the order of the platforms'
/// streams (then ids): the order a weighted pick walks, the same whatever ids the table
/// lists.
pub fn deserialize_weights<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(PlatformId, u32)>, D::Error> {
    let mut out = BTreeMap::<String, u32>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| Ok((platform(&k).map_err(serde::de::Error::custom)?, v)))
        .collect::<Result<Vec<_>, D::Error>>()?;
    out.sort_by_key(|&(p, _)| (stream(p), p));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_and_its_streams_are_distinct_and_below_the_derived_ones() {
        let table = table();
        let fixed: Vec<u8> = table.iter().filter_map(|k| k.stream).collect();
        let mut streams = fixed.clone();
        streams.sort_unstable();
        streams.dedup();
        assert_eq!(streams.len(), fixed.len());
        assert!(streams.iter().all(|s| *s < FIRST_DERIVED));
        let obv = platform("obv").unwrap();
        assert_eq!(obv.display_name(), "OpenBesluitvorming");
        let obv_api = service("obv").unwrap();
        assert_eq!(services_of(obv), [obv_api]);
        assert_eq!(
            known_service(obv_api).and_then(KnownService::limit).map(|l| l.capacity),
            Some(Units::whole(60))
        );
        assert_eq!(obv_api.default_limit().map(|l| l.capacity), Some(Units::whole(60)));
        assert_eq!(stream(obv), 1);
        assert_eq!(stream(platform("cvdr").unwrap()), 8);
        // Every service a platform names is declared, each once.
        let mut ids: Vec<&str> = services_table().iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), services_table().len());
        for k in super::table() {
            assert!(!k.services.is_empty(), "{} names no service", k.id);
            for s in &k.services {
                assert!(
                    ids.contains(&s.as_str()),
                    "{} names {s}, which the table does not declare",
                    k.id
                );
            }
        }
        // The Basiswettenbestand and the local regulations share KOOP's zoekservice.
        assert_eq!(
            services_of(platform("bwb").unwrap()),
            services_of(platform("cvdr").unwrap())
        );
    }

    #[test]
    fn an_unknown_platform_is_declared_once_with_a_stream_of_its_own() {
        let a = platform("woo").unwrap();
        let again = platform("woo").unwrap();
        assert_eq!(a, again);
        assert_eq!(a.display_name(), "woo");
        assert!(known(a).is_none());
        let own = services_of(a);
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].as_str(), "woo");
        assert_eq!(own[0].default_limit(), None);
        let s = stream(a);
        assert!((FIRST_DERIVED..STREAMS).contains(&s), "{s}");
        assert_eq!(s, stream(again));
        for bad in ["", "Obv", "o b", "ob/text", &"x".repeat(33)] {
            assert!(platform(bad).is_err(), "{bad:?}");
            assert!(service(bad).is_err(), "{bad:?}");
        }
    }
}
