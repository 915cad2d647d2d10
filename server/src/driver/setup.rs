//! A platform path's configuration from the server's settings: its lanes and limits,
//! retries and the requeue rule. Generic over platforms: what differs per platform is
//! in its settings ([`crate::config::PlatformConfig`], defaulted by its connector).

use besluitbron_core::PlatformId;
use besluitbron_core::path::{Lane, LaneConfig, PathConfig, RetryPolicy};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;

use crate::config::Config;

/// The lane of a platform's document text, when its settings keep a text limit of its
/// own (`TextLimit`); without one, the path serves text on the main lane.
pub const TEXT_LANE: Lane = Lane(1);

/// The path configuration of `platform`: its lanes and limits, retries and the requeue
/// rule, from the server's configuration.
pub fn path_config(config: &Config, platform: PlatformId) -> PathConfig {
    let pc = config.platform(platform);
    let mut lanes = vec![LaneConfig {
        name: "main",
        scheduler: config.scheduler(platform),
        max_in_flight: pc.max_concurrent,
    }];
    if let Some(text) = config.text_scheduler(platform) {
        lanes.push(LaneConfig {
            name: "text",
            scheduler: Some(text),
            max_in_flight: None,
        });
    }
    PathConfig {
        name: platform.as_str(),
        lanes,
        retry: RetryPolicy {
            max_attempts: pc.attempts,
            deadline_ms: pc.timeout_ms.saturating_mul(3),
            ..RetryPolicy::default()
        },
        requeue_wait_max: MAX_REQUEUE_WAIT,
        record_events: false,
    }
}
