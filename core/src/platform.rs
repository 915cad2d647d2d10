//! Who the core serves: platforms and the upstream services they call, each named by the
//! shell that gives them — the core keeps no list of either.
//!
//! A platform ([`Platform`], named by a [`PlatformId`]) is what a connector reads from
//! (OpenBesluitvorming, the Basiswettenbestand): its buffer, its records and its tools'
//! answers belong to it. A service ([`Service`], named by a [`ServiceId`]) is what a
//! platform's requests reach (KOOP's zoekservice, KOOP's repository host): its limit, its
//! fair queue and its owner among replicas belong to it, and several platforms may call
//! one service (the Basiswettenbestand and the local regulations both search KOOP's
//! zoekservice). Each is declared once, as a `static`, where it is defined — a
//! connector's platform by its connector, a service by the module that talks to it — and
//! the core compares them by id.
//!
//! Limits are configuration, never constants buried in code ("not observed" is not
//! "absent"): a service's declared default limit is the documented starting point, and
//! the server's configuration file overrides it.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::units::Units;

/// A platform as its connector declares it.
#[derive(Debug)]
pub struct Platform {
    /// The short id used in configuration, URLs (`/mcp/obv`) and metrics: lower-case
    /// letters and digits.
    pub id: &'static str,
    /// The platform's public name (OpenBesluitvorming).
    pub name: &'static str,
}

/// A platform's id: a reference to its declaration, compared, ordered and hashed by its
/// short id.
#[derive(Clone, Copy)]
pub struct PlatformId(&'static Platform);

impl PlatformId {
    /// The id of `platform`.
    pub const fn of(platform: &'static Platform) -> PlatformId {
        PlatformId(platform)
    }

    /// The short id used in configuration, URLs (`/mcp/obv`) and metrics.
    pub const fn as_str(self) -> &'static str {
        self.0.id
    }

    /// The platform's public name.
    pub const fn display_name(self) -> &'static str {
        self.0.name
    }
}

/// An upstream service as the module that talks to it declares it.
#[derive(Debug)]
pub struct Service {
    /// The short id used in configuration (`Services.<id>`), metrics and leases.
    pub id: &'static str,
    /// What it is, for people: its operator and host (`KOOP's zoekservice
    /// (zoekservice.overheid.nl)`).
    pub name: &'static str,
    /// The limit BesluitBron keeps there unless the configuration says otherwise;
    /// `None` passes calls straight through.
    pub limit: Option<LimitConfig>,
    /// Most calls in its fair queue or out at it at once unless the configuration says
    /// otherwise (the rest wait in arrival order); `None`: no bound.
    pub max_in_flight: Option<usize>,
}

/// An upstream service's id: a reference to its declaration, compared, ordered and
/// hashed by its short id.
#[derive(Clone, Copy)]
pub struct ServiceId(&'static Service);

impl ServiceId {
    /// The id of `service`.
    pub const fn of(service: &'static Service) -> ServiceId {
        ServiceId(service)
    }

    /// The short id used in configuration, metrics and leases.
    pub const fn as_str(self) -> &'static str {
        self.0.id
    }

    /// What it is, for people.
    pub const fn display_name(self) -> &'static str {
        self.0.name
    }

    /// The limit BesluitBron keeps there by default, if any.
    pub const fn default_limit(self) -> Option<LimitConfig> {
        self.0.limit
    }

    /// Most calls queued or out at once by default, if bounded.
    pub const fn default_max_in_flight(self) -> Option<usize> {
        self.0.max_in_flight
    }
}

macro_rules! by_id {
    ($t:ty) => {
        impl PartialEq for $t {
            fn eq(&self, other: &$t) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl Eq for $t {}

        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &$t) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $t {
            fn cmp(&self, other: &$t) -> Ordering {
                self.as_str().cmp(other.as_str())
            }
        }

        impl Hash for $t {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

by_id!(PlatformId);
by_id!(ServiceId);

/// Platforms that share upstream services, and those services: what one path serves,
/// one task drives and, with several replicas, one owner holds.
///
/// Two platforms that call one service share its limit and its fair queue, so they are
/// served by one path; and everything a platform calls is on its path. A group is the
/// smallest set closed under both rules: the platforms linked, directly or through
/// others, by the services they call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetGroup {
    /// Its services, in the order the platforms name them (each platform's first service
    /// first): lane `i` of the group's path is `services[i]`.
    pub services: Vec<ServiceId>,
    /// Its platforms, in the order given.
    pub platforms: Vec<PlatformId>,
}

impl BudgetGroup {
    /// The group's name: its first service's id (its path's name, its lease's).
    pub fn name(&self) -> &'static str {
        self.services.first().map_or("", |s| s.as_str())
    }

    /// The lane of `service` in the group's path, if the group has it.
    pub fn lane_of(&self, service: ServiceId) -> Option<usize> {
        self.services.iter().position(|s| *s == service)
    }
}

/// The budget groups of `platforms`, each given with the services it calls (its first
/// service is where its calls go unless they say otherwise): groups in the order of
/// their first platform, services and platforms in order of first mention. A platform
/// listed twice, or with no service, is the caller's error and is refused.
pub fn budget_groups(platforms: &[(PlatformId, &[ServiceId])]) -> Result<Vec<BudgetGroup>, String> {
    let mut groups: Vec<BudgetGroup> = Vec::new();
    for &(platform, services) in platforms {
        if services.is_empty() {
            return Err(format!("the platform `{platform}` names no service"));
        }
        if groups.iter().any(|g| g.platforms.contains(&platform)) {
            return Err(format!("the platform `{platform}` is listed twice"));
        }
        // Every group this platform's services touch joins the first of them.
        let touched: Vec<usize> = (0..groups.len())
            .filter(|&i| services.iter().any(|s| groups[i].services.contains(s)))
            .collect();
        let mut group = match touched.first() {
            Some(&first) => groups[first].clone(),
            None => BudgetGroup {
                services: Vec::new(),
                platforms: Vec::new(),
            },
        };
        for &i in touched.iter().skip(1) {
            for s in &groups[i].services {
                if !group.services.contains(s) {
                    group.services.push(*s);
                }
            }
            group.platforms.extend(groups[i].platforms.iter().copied());
        }
        for s in services {
            if !group.services.contains(s) {
                group.services.push(*s);
            }
        }
        group.platforms.push(platform);
        match touched.first() {
            Some(&first) => {
                groups[first] = group;
                for &i in touched.iter().skip(1).rev() {
                    groups.remove(i);
                }
            }
            None => groups.push(group),
        }
    }
    Ok(groups)
}

/// Platforms and services for tests and documentation examples of the core's types.
///
/// The core serves no platform of its own: its shells declare theirs. These declarations
/// carry real platforms' short ids so that traces and snapshots read as the real ones
/// do; nothing serves them.
pub mod examples {
    use std::time::Duration;

    use super::{LimitConfig, Platform, PlatformId, Service, ServiceId};
    use crate::units::Units;

    static OBV_PLATFORM: Platform = Platform {
        id: "obv",
        name: "OpenBesluitvorming",
    };
    static TK_PLATFORM: Platform = Platform {
        id: "tk",
        name: "Tweede Kamer",
    };
    static OB_PLATFORM: Platform = Platform {
        id: "ob",
        name: "Officiële Bekendmakingen",
    };
    static RECHTSPRAAK_PLATFORM: Platform = Platform {
        id: "rechtspraak",
        name: "Rechtspraak",
    };
    static OBV_SERVICE: Service = Service {
        id: "obv",
        name: "OpenBesluitvorming's API",
        limit: Some(LimitConfig::new(Units::whole(60), Duration::from_secs(60))),
        max_in_flight: None,
    };

    /// A platform with the short id `obv`.
    pub const OBV: PlatformId = PlatformId::of(&OBV_PLATFORM);
    /// A platform with the short id `tk`.
    pub const TK: PlatformId = PlatformId::of(&TK_PLATFORM);
    /// A platform with the short id `ob`.
    pub const OB: PlatformId = PlatformId::of(&OB_PLATFORM);
    /// A platform with the short id `rechtspraak`.
    pub const RECHTSPRAAK: PlatformId = PlatformId::of(&RECHTSPRAAK_PLATFORM);
    /// A service with the short id `obv`, limited to 60 units a minute.
    pub const OBV_API: ServiceId = ServiceId::of(&OBV_SERVICE);
    /// Every example platform.
    pub const PLATFORMS: [PlatformId; 4] = [OBV, TK, OB, RECHTSPRAAK];
}

/// A platform limit: a bucket of `capacity` units refilled continuously at
/// `capacity` per `window` (R-L1). `window` is the time the bucket needs to refill
/// completely.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LimitConfig {
    /// C: the most units the bucket holds.
    pub capacity: Units,
    /// W: the time an empty bucket needs to refill completely.
    #[serde(with = "duration_secs")]
    pub window: Duration,
}

impl LimitConfig {
    /// A bucket of `capacity` units refilled over `window`.
    pub const fn new(capacity: Units, window: Duration) -> LimitConfig {
        LimitConfig { capacity, window }
    }

    /// The same refill rate with less burst, so that calls which reach the platform up
    /// to `margin` later or earlier than they left still find room there.
    ///
    /// The platform counts arrivals, BesluitBron counts departures. If the first call
    /// of a burst travels longer than a later one, the platform's bucket is up to that
    /// difference behind the local one, and a call the local bucket admits exactly on
    /// time would be refused. Holding back `h = C × margin / W` units of the burst
    /// covers a difference of up to `margin`: the result is a bucket of `C − h` units
    /// refilled at the same C per W (its window `W × (C − h) / C`, rounded up, so the
    /// rate can only come out slower). `h` is at most half of C; a zero margin returns
    /// the limit unchanged.
    pub fn with_margin(self, margin: Duration) -> LimitConfig {
        let c = u128::from(self.capacity.as_milli());
        let w = self.window.as_nanos();
        if margin.is_zero() || c == 0 || w == 0 {
            return self;
        }
        let held = (c * margin.as_nanos() / w).min(c / 2);
        let kept = c - held;
        let window_ns = (w * kept).div_ceil(c);
        LimitConfig {
            capacity: Units::from_milli(u64::try_from(kept).unwrap_or(u64::MAX)),
            window: Duration::from_nanos(u64::try_from(window_ns).unwrap_or(u64::MAX)),
        }
    }
}

/// Serialises a [`Duration`] as (possibly fractional) seconds.
pub mod duration_secs {
    use std::time::Duration;

    /// Writes seconds as a float.
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Reads seconds from an integer or a float.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = <f64 as serde::Deserialize>::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_margin_holds_back_burst_but_keeps_the_rate() {
        let obv = LimitConfig::new(Units::whole(60), Duration::from_secs(60));
        let m = obv.with_margin(Duration::from_secs(1));
        assert_eq!(m.capacity, Units::whole(59));
        assert_eq!(m.window, Duration::from_secs(59));
        let oa = LimitConfig::new(Units::whole(120), Duration::from_secs(60)).with_margin(Duration::from_secs(1));
        assert_eq!((oa.capacity, oa.window), (Units::whole(118), Duration::from_secs(59)));
        // A third of a unit per second: the window is rounded up, never down.
        let slow = LimitConfig::new(Units::whole(7), Duration::from_secs(21)).with_margin(Duration::from_secs(3));
        assert_eq!(slow.capacity, Units::whole(6));
        assert_eq!(slow.window, Duration::from_secs(18));
        // At most half the bucket is held back; no margin changes nothing.
        let half = obv.with_margin(Duration::from_secs(3600));
        assert_eq!(
            (half.capacity, half.window),
            (Units::whole(30), Duration::from_secs(30))
        );
        assert_eq!(obv.with_margin(Duration::ZERO), obv);
    }

    static OBV: Platform = Platform {
        id: "obv",
        name: "OpenBesluitvorming",
    };
    static OBV_AGAIN: Platform = Platform {
        id: "obv",
        name: "another declaration",
    };
    static TK: Platform = Platform {
        id: "tk",
        name: "Tweede Kamer",
    };

    #[test]
    fn ids_compare_by_their_short_id_and_show_it() {
        let (obv, again, tk) = (PlatformId::of(&OBV), PlatformId::of(&OBV_AGAIN), PlatformId::of(&TK));
        assert_eq!(obv, again);
        assert!(obv < tk);
        assert_eq!(
            format!("{obv} {obv:?} {}", obv.display_name()),
            "obv obv OpenBesluitvorming"
        );
        let mut set = std::collections::BTreeSet::new();
        set.insert(obv);
        assert!(set.contains(&again));
    }

    static SVC: [Service; 5] = [
        Service {
            id: "s0",
            name: "s0",
            limit: None,
            max_in_flight: None,
        },
        Service {
            id: "s1",
            name: "s1",
            limit: None,
            max_in_flight: None,
        },
        Service {
            id: "s2",
            name: "s2",
            limit: None,
            max_in_flight: None,
        },
        Service {
            id: "s3",
            name: "s3",
            limit: None,
            max_in_flight: None,
        },
        Service {
            id: "s4",
            name: "s4",
            limit: None,
            max_in_flight: None,
        },
    ];
    static PLATFORMS: [Platform; 6] = [
        Platform { id: "p0", name: "p0" },
        Platform { id: "p1", name: "p1" },
        Platform { id: "p2", name: "p2" },
        Platform { id: "p3", name: "p3" },
        Platform { id: "p4", name: "p4" },
        Platform { id: "p5", name: "p5" },
    ];

    fn svc(i: usize) -> ServiceId {
        ServiceId::of(&SVC[i])
    }

    fn plat(i: usize) -> PlatformId {
        PlatformId::of(&PLATFORMS[i])
    }

    /// The reference: two platforms are in one group exactly when a chain of shared
    /// services links them.
    fn linked(uses: &[Vec<usize>], a: usize, b: usize) -> bool {
        let mut reached = vec![false; uses.len()];
        let mut stack = vec![a];
        reached[a] = true;
        while let Some(x) = stack.pop() {
            for y in 0..uses.len() {
                if !reached[y] && uses[x].iter().any(|s| uses[y].contains(s)) {
                    reached[y] = true;
                    stack.push(y);
                }
            }
        }
        reached[b]
    }

    quickcheck::quickcheck! {
        fn qc_groups_are_the_linked_platforms_and_hold_their_services(raw: Vec<Vec<u8>>) -> bool {
            let uses: Vec<Vec<usize>> = raw
                .iter()
                .take(PLATFORMS.len())
                .map(|s| {
                    let mut v: Vec<usize> = s.iter().take(3).map(|x| usize::from(*x) % SVC.len()).collect();
                    v.dedup();
                    if v.is_empty() { vec![0] } else { v }
                })
                .collect();
            let services: Vec<Vec<ServiceId>> = uses.iter().map(|u| u.iter().map(|&i| svc(i)).collect()).collect();
            let given: Vec<(PlatformId, &[ServiceId])> =
                services.iter().enumerate().map(|(i, s)| (plat(i), s.as_slice())).collect();
            let Ok(groups) = budget_groups(&given) else { return false };
            let group_of = |p: usize| groups.iter().position(|g| g.platforms.contains(&plat(p)));
            (0..uses.len()).all(|a| {
                let g = group_of(a);
                g.is_some()
                    && groups.iter().filter(|x| x.platforms.contains(&plat(a))).count() == 1
                    && uses[a].iter().all(|&s| groups[g.unwrap_or(0)].services.contains(&svc(s)))
                    && groups[g.unwrap_or(0)].services[..].contains(&svc(uses[a][0]))
                    && (0..uses.len()).all(|b| (group_of(b) == g) == linked(&uses, a, b))
            }) && groups.iter().all(|g| !g.services.is_empty())
        }
    }

    #[test]
    fn regression_a_platform_joining_two_groups_merges_them_in_order() {
        let (a, b, c) = ([svc(0)], [svc(1)], [svc(1), svc(0)]);
        let groups = budget_groups(&[(plat(0), &a), (plat(1), &b), (plat(2), &c)]).unwrap();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].platforms, [plat(0), plat(1), plat(2)]);
        assert_eq!(groups[0].services, [svc(0), svc(1)]);
        assert_eq!(groups[0].name(), "s0");
        assert_eq!(groups[0].lane_of(svc(1)), Some(1));
        assert!(budget_groups(&[(plat(0), &a), (plat(0), &b)]).is_err(), "listed twice");
        assert!(budget_groups(&[(plat(0), &[])]).is_err(), "no service");
    }

    #[test]
    fn a_service_carries_its_default_limit() {
        static ZOEK: Service = Service {
            id: "koop-zoekservice",
            name: "KOOP's zoekservice",
            limit: Some(LimitConfig::new(Units::whole(30), Duration::from_secs(30))),
            max_in_flight: None,
        };
        let zoek = ServiceId::of(&ZOEK);
        assert_eq!(zoek.as_str(), "koop-zoekservice");
        assert_eq!(zoek.default_limit().map(|l| l.capacity), Some(Units::whole(30)));
    }
}
