//! Seeds: one root seed, one independent sub-seed per component.
//!
//! Invariants: a component's stream depends only on the root seed and the component,
//! so adding a platform or changing the workload never shifts another component's
//! draws. The generator is `Xoshiro256PlusPlus`, whose output rand documents as
//! portable and stable across releases; it is never seeded from the wall clock.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// The simulator's random number generator.
pub type SimRng = Xoshiro256PlusPlus;

/// The parts of a run that draw random numbers, each from its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// Generated sessions (groups).
    Workload,
    /// Answer latency at one platform (index into `PlatformId::ALL`).
    Latency(u8),
    /// Faults, including the legacy model's uncounted slip-through.
    Faults(u8),
    /// The keys calls ask (`key_pool`).
    Keys,
    /// Failed answers at one platform (`fail_rate`).
    Failures(u8),
}

impl Component {
    fn tag(self) -> u64 {
        match self {
            Component::Workload => 0x776f_726b,
            Component::Latency(p) => 0x6c61_7400 | u64::from(p),
            Component::Faults(p) => 0x6661_7500 | u64::from(p),
            Component::Keys => 0x6b65_7973,
            Component::Failures(p) => 0x0066_6169_6c00 | u64::from(p),
        }
    }
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
}
