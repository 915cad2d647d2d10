//! The nine platforms BesluitBron reads, and the limits it keeps for them.
//!
//! Limits are configuration, never constants buried in code ("not observed" is not
//! "absent"): [`PlatformId::default_limit`] gives the documented starting point,
//! and the server's configuration file overrides it per platform.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::units::Units;

/// One of the nine public platforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlatformId {
    /// Open Raadsinformatie (classic Elasticsearch API; switched off on 1 November 2026).
    Ori,
    /// OpenBesluitvorming, the successor of ORI; enforces 60 weighted units per minute.
    Obv,
    /// Tweede Kamer open data portal (OData v4).
    Tk,
    /// OpenTK (berthub.eu/tkconv).
    Opentk,
    /// Officiële Bekendmakingen (KOOP SRU).
    Ob,
    /// Rechtspraak open data (and the website's search service).
    Rechtspraak,
    /// Open Archivaris.
    Oa,
    /// The Basiswettenbestand: national legislation as in force (KOOP SRU,
    /// `x-connection=BWB`, and its toestand XML).
    Bwb,
    /// The Centrale Voorziening Decentrale Regelgeving: local regulations of
    /// municipalities, provinces and water boards (KOOP SRU, `x-connection=cvdr`, and
    /// each regulation's XML).
    Cvdr,
}

/// A platform id that is not one of the nine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown platform `{0}`: expected one of ori, obv, tk, opentk, ob, rechtspraak, oa, bwb, cvdr")]
pub struct UnknownPlatform(pub String);

impl PlatformId {
    /// All nine, in a fixed order (used wherever output must be deterministic).
    pub const ALL: [PlatformId; 9] = [
        PlatformId::Ori,
        PlatformId::Obv,
        PlatformId::Tk,
        PlatformId::Opentk,
        PlatformId::Ob,
        PlatformId::Rechtspraak,
        PlatformId::Oa,
        PlatformId::Bwb,
        PlatformId::Cvdr,
    ];

    /// The short id used in configuration, URLs (`/mcp/obv`) and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            PlatformId::Ori => "ori",
            PlatformId::Obv => "obv",
            PlatformId::Tk => "tk",
            PlatformId::Opentk => "opentk",
            PlatformId::Ob => "ob",
            PlatformId::Rechtspraak => "rechtspraak",
            PlatformId::Oa => "oa",
            PlatformId::Bwb => "bwb",
            PlatformId::Cvdr => "cvdr",
        }
    }

    /// The platform's public name.
    pub const fn display_name(self) -> &'static str {
        match self {
            PlatformId::Ori => "Open Raadsinformatie",
            PlatformId::Obv => "OpenBesluitvorming",
            PlatformId::Tk => "Tweede Kamer",
            PlatformId::Opentk => "OpenTK",
            PlatformId::Ob => "Officiële Bekendmakingen",
            PlatformId::Rechtspraak => "Rechtspraak",
            PlatformId::Oa => "Open Archivaris",
            PlatformId::Bwb => "Basiswettenbestand",
            PlatformId::Cvdr => "Lokale regelgeving (CVDR)",
        }
    }

    /// The limit BesluitBron keeps on its own side by default, or `None` where it
    /// passes calls straight through (R-L7 names `ob`, `oa`, `obv`, `rechtspraak`).
    ///
    /// - `obv`: 60 units, refilled at one per second — what the platform enforces.
    /// - `oa`: 120 calls per minute, as the requirements state (unverified upstream).
    /// - `ob`: a limit exists but its numbers are unpublished; 30 calls refilled at one
    ///   per second, close to the pacing careful harvesters use (0.5–1 s per page).
    /// - `rechtspraak`: "don't hammer"; 60 calls refilled at two per second.
    /// - `bwb`: KOOP's SRU service, like `ob`: a limit exists, its numbers are unpublished;
    ///   the same 30 calls refilled at one per second, on a lane of its own (another host).
    /// - `cvdr`: the same SRU service as `bwb` (another `x-connection`), its numbers
    ///   unpublished too: the same 30 calls refilled at one per second, on a lane of its
    ///   own (each platform has one; together the two lanes may send KOOP's search host
    ///   two calls per second, which the configuration can lower).
    pub const fn default_limit(self) -> Option<LimitConfig> {
        match self {
            PlatformId::Obv => Some(LimitConfig::new(Units::whole(60), Duration::from_secs(60))),
            PlatformId::Oa => Some(LimitConfig::new(Units::whole(120), Duration::from_secs(60))),
            PlatformId::Ob | PlatformId::Bwb | PlatformId::Cvdr => {
                Some(LimitConfig::new(Units::whole(30), Duration::from_secs(30)))
            }
            PlatformId::Rechtspraak => Some(LimitConfig::new(Units::whole(60), Duration::from_secs(30))),
            PlatformId::Ori | PlatformId::Tk | PlatformId::Opentk => None,
        }
    }

    /// The limit BesluitBron keeps by default for the platform's document text, where
    /// its text host keeps one of its own, or `None` (text then shares the main limit).
    ///
    /// - `ob`: the publication host reportedly states 10 requests per 30 s.
    pub const fn default_text_limit(self) -> Option<LimitConfig> {
        match self {
            PlatformId::Ob => Some(LimitConfig::new(Units::whole(10), Duration::from_secs(30))),
            _ => None,
        }
    }
}

impl fmt::Display for PlatformId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PlatformId {
    type Err = UnknownPlatform;
    fn from_str(s: &str) -> Result<PlatformId, UnknownPlatform> {
        PlatformId::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPlatform(s.to_owned()))
    }
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

    #[test]
    fn ids_round_trip_through_text() {
        for p in PlatformId::ALL {
            assert_eq!(p.as_str().parse::<PlatformId>(), Ok(p));
        }
        assert!("kamer".parse::<PlatformId>().is_err());
    }

    #[test]
    fn the_four_platforms_of_r_l7_bwb_and_cvdr_keep_a_limit() {
        let limited: Vec<_> = PlatformId::ALL
            .into_iter()
            .filter(|p| p.default_limit().is_some())
            .collect();
        assert_eq!(
            limited,
            [
                PlatformId::Obv,
                PlatformId::Ob,
                PlatformId::Rechtspraak,
                PlatformId::Oa,
                PlatformId::Bwb,
                PlatformId::Cvdr
            ]
        );
        let obv = PlatformId::Obv.default_limit().unwrap();
        assert_eq!((obv.capacity, obv.window), (Units::whole(60), Duration::from_secs(60)));
        let with_text: Vec<_> = PlatformId::ALL
            .into_iter()
            .filter(|p| p.default_text_limit().is_some())
            .collect();
        assert_eq!(
            with_text,
            [PlatformId::Ob],
            "only ob's text host keeps a limit of its own"
        );
        let text = PlatformId::Ob.default_text_limit().unwrap();
        assert_eq!(
            (text.capacity, text.window),
            (Units::whole(10), Duration::from_secs(30))
        );
    }
}
