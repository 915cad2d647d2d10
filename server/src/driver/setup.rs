//! A budget group's path configuration from the server's settings: one lane per upstream
//! service the group's platforms call, each with that service's limit and queue bounds,
//! and retries fitting the slowest of its platforms. Generic over platforms: what
//! differs is in the settings ([`crate::config::ServiceConfig`] per service,
//! [`crate::config::PlatformConfig`] per platform, defaulted by the connectors).

use besluitbron_core::BudgetGroup;
use besluitbron_core::path::{LaneConfig, PathConfig, RetryPolicy};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;

use crate::config::Config;

/// The path configuration of `group`: lane `i` is the group's service `i`, with the limit
/// BesluitBron keeps there; a retry gets the most attempts and the longest deadline any
/// of its platforms is given.
pub fn path_config(config: &Config, group: &BudgetGroup) -> PathConfig {
    let lanes = group
        .services
        .iter()
        .map(|&service| LaneConfig {
            name: service.as_str(),
            scheduler: config.scheduler(service),
            max_in_flight: config.service(service).max_concurrent,
        })
        .collect();
    let settings: Vec<_> = group.platforms.iter().map(|&p| config.platform(p)).collect();
    let attempts = settings.iter().map(|p| p.attempts).max().unwrap_or(1);
    let timeout_ms = settings.iter().map(|p| p.timeout_ms).max().unwrap_or(15_000);
    PathConfig {
        name: group.name(),
        lanes,
        retry: RetryPolicy {
            max_attempts: attempts,
            deadline_ms: timeout_ms.saturating_mul(3),
            ..RetryPolicy::default()
        },
        requeue_wait_max: MAX_REQUEUE_WAIT,
        record_events: false,
    }
}
