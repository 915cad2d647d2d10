//! Seeds: one root seed, one independent sub-seed per component.
//!
//! Invariants: a component's stream depends only on the root seed and the component,
//! so adding a platform or changing the workload never shifts another component's
//! draws. The generator is `Xoshiro256PlusPlus`, whose output rand documents as
//! portable and stable across releases; it is never seeded from the wall clock.

use besluitbron_core::PlatformId;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// The simulator's random number generator.
pub type SimRng = Xoshiro256PlusPlus;

/// The parts of a run that draw random numbers, each from its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// Generated sessions (groups).
    Workload,
    /// Answer latency at one platform's host ([`host_stream`]).
    Latency(u8),
    /// Faults, including the legacy model's uncounted slip-through ([`host_stream`]).
    Faults(u8),
    /// The keys calls ask (`key_pool`).
    Keys,
    /// Failed answers at one platform ([`host_stream`]).
    Failures(u8),
    /// One generated session of a group that draws each session from a stream of its own
    /// (a group with a rhythm): the group's place among the scenario's groups, and the
    /// session's number in it.
    Session {
        /// The group's index among the scenario's groups.
        group: u16,
        /// The session's number in its group.
        n: u32,
    },
}

impl Component {
    fn tag(self) -> u64 {
        match self {
            Component::Workload => 0x776f_726b,
            Component::Latency(p) => 0x6c61_7400 | u64::from(p),
            Component::Faults(p) => 0x6661_7500 | u64::from(p),
            Component::Keys => 0x6b65_7973,
            Component::Failures(p) => 0x0066_6169_6c00 | u64::from(p),
            // High bits no other tag uses, then the group and the session.
            Component::Session { group, n } => 0x7365_0000_0000_0000 | u64::from(group) << 32 | u64::from(n),
        }
    }
}

/// What [`host_stream`] adds for a platform's text host.
const TEXT_HOST_STREAMS: u8 = 64;

/// The number of a platform's host in the per-host components ([`Component::Latency`],
/// [`Component::Faults`], [`Component::Failures`]): the platform's stream
/// ([`crate::ids::stream`]) for its main host, that plus 64 for its text host. It is
/// fixed by the id, never by the platform's place in a run, so a platform draws the same
/// whatever other platforms a scenario lists.
pub fn host_stream(id: PlatformId, text_host: bool) -> u8 {
    let n = crate::ids::stream(id);
    debug_assert!(n < TEXT_HOST_STREAMS, "a platform's stream fits below the text hosts'");
    if text_host { n + TEXT_HOST_STREAMS } else { n }
}

/// SplitMix64's finaliser: a bijective mix, so distinct inputs give distinct sub-seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The sub-seed of `component` under `root`.
pub fn sub_seed(root: u64, component: Component) -> u64 {
    mix(mix(root) ^ component.tag())
}

/// A generator for `component` under `root`.
pub fn sim_rng(root: u64, component: Component) -> SimRng {
    SimRng::seed_from_u64(sub_seed(root, component))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn components_draw_independent_streams() {
        let a: u64 = sim_rng(7, Component::Latency(1)).random();
        let b: u64 = sim_rng(7, Component::Latency(2)).random();
        let again: u64 = sim_rng(7, Component::Latency(1)).random();
        assert_ne!(a, b);
        assert_eq!(a, again);
    }

    #[test]
    fn a_host_draws_by_its_id_and_a_text_host_apart_from_its_platform() {
        // The main hosts' numbers are those the seeds of every snapshot were drawn with.
        let id = |s: &str| crate::ids::platform(s).unwrap();
        assert_eq!(host_stream(id("ori"), false), 0);
        assert_eq!(host_stream(id("obv"), false), 1);
        assert_eq!(host_stream(id("cvdr"), false), 8);
        assert_eq!(host_stream(id("ob"), true), 68);
        let known: Vec<PlatformId> = crate::ids::table().iter().map(|k| id(&k.id)).collect();
        let mut all: Vec<u8> = [false, true]
            .into_iter()
            .flat_map(|text| known.iter().map(move |p| host_stream(*p, text)))
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2 * known.len(), "every host a stream of its own");
    }
}
