//! The server's clocks, read at the edge and handed to the core as values: tokio's
//! monotonic clock as a core [`Instant`] (so tokio's paused test clock runs the whole
//! server in virtual time), and the wall clock as a core [`WallTime`] (buffer expiry,
//! which must survive a restart).
//!
//! [`Clock::wall`] is the wall clock read once at start plus the monotonic time since:
//! it never jumps with clock adjustments, and under the paused test clock buffer entries
//! expire in virtual time, as in the simulator.

use std::time::Duration;

use besluitbron_core::{Instant, WallTime};

/// Turns tokio's clock into core instants.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: tokio::time::Instant,
    origin_wall: WallTime,
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn start() -> Clock {
        Clock {
            origin: tokio::time::Instant::now(),
            origin_wall: wall_now(),
        }
    }

    /// The wall clock now: the wall clock at start plus the monotonic time since.
    pub fn wall(&self) -> WallTime {
        self.origin_wall.saturating_add(self.origin.elapsed())
    }

    /// The wall clock at core instant `at`: the wall clock at start plus `at` (so two
    /// instants' difference is their wall times' difference, to the millisecond).
    pub fn wall_at(&self, at: Instant) -> WallTime {
        self.origin_wall.saturating_add(Duration::from_nanos(at.as_nanos()))
    }

    /// Now, as a core instant.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// A core instant as a tokio instant.
    pub fn to_tokio(&self, at: Instant) -> tokio::time::Instant {
        self.origin + Duration::from_nanos(at.as_nanos())
    }
}

/// The wall clock, read at the edge and handed to the core as a value.
pub fn wall_now() -> WallTime {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    WallTime(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX))
}
