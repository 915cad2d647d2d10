//! Platform ids as scenarios and traces write them, and what the simulator knows of the
//! real platforms (`sim/platforms.toml`).
//!
//! The simulator's platforms are its input's: a scenario's `[[platform]]` list, a trace's
//! lines. Their ids are text; [`platform`] turns one into the core's [`PlatformId`],
//! declaring each distinct id once per process. What a platform is like by default — its
//! public name, the limit it enforces, its text host's, whether it states its budget, its
//! random stream — comes from `sim/platforms.toml` for the real platforms; a platform the
//! table does not know runs with no limit under its own id.
//!
//! Invariants:
//! - one declaration per distinct id per process (ids compare by text, so two calls with
//!   the same id give equal ids; the declarations live as long as the process);
//! - a known platform's stream is the table's, an unknown one's is derived from its id
//!   alone (9–63), so a platform draws the same whatever else a scenario lists.
//!
//! What this module does not do: serve or name the server's connectors (the server's
//! registry declares those), or decide limits for a run (a scenario's entry overrides).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use besluitbron_core::{LimitConfig, Platform, PlatformId, Units};
use serde::{Deserialize, Deserializer};

/// What the simulator knows of one real platform.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// Its short id.
    pub id: String,
    /// Its public name.
    pub name: String,
    /// Its random stream (below 64).
    pub stream: u8,
    /// C as it enforces it.
    pub capacity: Option<Units>,
    /// W as it enforces it, in seconds.
    pub window_s: Option<f64>,
    /// C of its text host.
    pub text_capacity: Option<Units>,
    /// W of its text host, in seconds.
    pub text_window_s: Option<f64>,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    #[serde(default)]
    pub rate_limit_headers: bool,
}

impl Known {
    /// The limit it enforces, if any.
    pub fn limit(&self) -> Option<LimitConfig> {
        limit(self.capacity, self.window_s)
    }

    /// Its text host's limit, if it keeps one of its own.
    pub fn text_limit(&self) -> Option<LimitConfig> {
        limit(self.text_capacity, self.text_window_s)
    }
}

fn limit(capacity: Option<Units>, window_s: Option<f64>) -> Option<LimitConfig> {
    Some(LimitConfig::new(capacity?, Duration::from_secs_f64(window_s?)))
}

#[derive(Deserialize)]
struct Table {
    platform: Vec<Known>,
}

/// The real platforms the simulator knows, from `sim/platforms.toml`.
pub fn table() -> &'static [Known] {
    static TABLE: OnceLock<Vec<Known>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The table is the simulator's own file, compiled in; its test reads it.
        let table: Table =
            toml::from_str(include_str!("../platforms.toml")).unwrap_or_else(|e| panic!("sim/platforms.toml: {e}"));
        table.platform
    })
}

/// What the simulator knows of the platform `id`, if it is a real one.
pub fn known(id: PlatformId) -> Option<&'static Known> {
    table().iter().find(|k| k.id == id.as_str())
}

/// The streams below this are the table's and those derived from ids.
const STREAMS: u8 = 64;
/// The first stream derived from an id.
const FIRST_DERIVED: u8 = 9;

/// The random stream of platform `id`: the table's, or derived from its id.
pub fn stream(id: PlatformId) -> u8 {
    if let Some(k) = known(id) {
        return k.stream;
    }
    // FNV-1a over the id: stable across runs and builds.
    let hash = id.as_str().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    FIRST_DERIVED + u8::try_from(hash % u64::from(STREAMS - FIRST_DERIVED)).unwrap_or(0)
}

/// The platform `id` of a scenario or trace: lower-case letters, digits and `-`, 1 to 32
/// characters.
pub fn platform(id: &str) -> Result<PlatformId, String> {
    let ok = !id.is_empty()
        && id.len() <= 32
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !ok {
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

/// Reads a platform id (serde's `deserialize_with`).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PlatformId, D::Error> {
    let text = String::deserialize(d)?;
    platform(&text).map_err(serde::de::Error::custom)
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
        let mut streams: Vec<u8> = table.iter().map(|k| k.stream).collect();
        streams.sort_unstable();
        streams.dedup();
        assert_eq!(streams.len(), table.len());
        assert!(streams.iter().all(|s| *s < FIRST_DERIVED));
        let obv = platform("obv").unwrap();
        assert_eq!(obv.display_name(), "OpenBesluitvorming");
        assert_eq!(
            known(obv).and_then(Known::limit).map(|l| l.capacity),
            Some(Units::whole(60))
        );
        assert_eq!(stream(obv), 1);
        assert_eq!(stream(platform("cvdr").unwrap()), 8);
    }

    #[test]
    fn an_unknown_platform_is_declared_once_with_a_stream_of_its_own() {
        let a = platform("woo").unwrap();
        let again = platform("woo").unwrap();
        assert_eq!(a, again);
        assert_eq!(a.display_name(), "woo");
        assert!(known(a).is_none());
        let s = stream(a);
        assert!((FIRST_DERIVED..STREAMS).contains(&s), "{s}");
        assert_eq!(s, stream(again));
        for bad in ["", "Obv", "o b", "ob/text", &"x".repeat(33)] {
            assert!(platform(bad).is_err(), "{bad:?}");
        }
    }
}
