//! The end of a run: what it gives back ([`RunOutcome`]) from the engine's state — per
//! service its budget's counters, per platform its calls, the aggregates, the admissions.
//!
//! What this module does not do: check anything (the run's end checks come first).

use super::{Engine, PlatformCalls, RunOutcome, ServiceOutcome};
use crate::policy::Gate;

impl Engine<'_> {
    pub(super) fn finish(self) -> RunOutcome {
        let services = self
            .stations
            .iter()
            .enumerate()
            .filter(|&(s, _)| self.used[s] > 0)
            .map(|(s, station)| {
                let up = &self.upstreams[s];
                ServiceOutcome {
                    id: station.id,
                    platforms: self.services.services[s].platforms.clone(),
                    model: up.model,
                    limit: up.limit,
                    local_limit: self.local_limits[s],
                    counters: up.counters,
                    max_units_in_window: up.max_units_in_window(),
                    uncounted: match self.gates.get(s) {
                        Some(Gate::Legacy(g)) => g.uncounted,
                        _ => 0,
                    },
                    calls: self.used[s],
                    upstream: self.upstream[s],
                }
            })
            .collect();
        let platforms = self
            .workload
            .platforms
            .iter()
            .enumerate()
            .map(|(p, spec)| PlatformCalls {
                id: spec.id,
                services: self.services.routes[p].iter().map(|&s| self.stations[s].id).collect(),
                calls: self.platform_used[p],
                upstream: self.platform_upstream[p],
                path: self.fair.as_ref().map(|f| f.shells[self.group_of[p]].path().stats()),
            })
            .collect();
        let path_checks = self.fair.as_ref().map_or(0, |f| f.path_checks);
        let admissions = self.fair.and_then(|f| f.admissions).unwrap_or_default();
        let w = self.workload;
        RunOutcome {
            name: self.name,
            policy: self.opts.policy,
            seed: self.opts.seed,
            sessions: if self.keep.calls {
                w.session_plans()
            } else {
                w.sessions.clone()
            },
            generated: w
                .groups
                .iter()
                .map(|g| (g.prefix.clone(), g.first_session, g.sessions))
                .collect(),
            calls: self.calls.into_kept(),
            summary: self.agg.finish(self.now),
            services,
            platforms,
            end_at: self.now,
            events: self.events,
            bound_checked: self.checker.bound_checked,
            path_checks,
            trace_hash: self.trace.hash(),
            trace_lines: self.trace.len(),
            trace: self.trace.into_lines(),
            keyed: self.workload.has_keys(),
            admissions,
        }
    }
}
