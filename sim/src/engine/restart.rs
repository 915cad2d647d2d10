//! The server's process restarting in the middle of a recording (the soak kills it and
//! starts it again): the replay does what the server did.
//!
//! At the restart every platform's path of the old process is gone: what still waited or
//! was out in the replay is cut (the calls end withdrawn; an answer to an attempt of the
//! old process reaches nobody, [`super::FairState::eras`]). Each budget group gets a new
//! path, as the server's new process makes one: full buckets, empty queues, no flight —
//! over the buffers the old one left (the server's buffers are files that outlive its
//! process). The simulated services go on as they were: a service does not restart with
//! the server, and its bucket still holds what the old process spent — so for one window
//! a call the new bucket let go may find no room there, which is the restart's doing, not
//! the scheduler's, and is counted apart (`PlatformCounters::after_restart`).
//!
//! Invariants: a call of the old process never reaches the new path; the checker's
//! mirror of each new scheduler starts empty, and the starvation bound covers only waits
//! that begin after the restart.
//!
//! What this module does not do: restart anything under the legacy model (it knows no
//! process), or guess what the server did with requests the recording lacks.

use super::setup::path_over;
use super::{CallState, Engine, Failure};
use crate::group_buffer::GroupBuffer;

impl Engine<'_> {
    /// The server's process restarts now.
    pub(super) fn restart(&mut self) -> Result<(), Box<Failure>> {
        if self.fair.is_none() {
            return Ok(());
        }
        let now = self.now;
        for g in 0..self.groups.len() {
            let group = self.groups[g].clone();
            // What the old process still held: cut, in the order the calls were made.
            let cut: Vec<_> = self
                .calls
                .live_ids()
                .into_iter()
                .filter(|&c| group.platforms.contains(&self.calls[c].platform))
                .collect();
            for &call in &cut {
                self.calls[call].state = CallState::Cancelled;
                self.checker.flights.on_left(call);
                self.finish_call(call);
            }
            for &platform in &group.platforms {
                let p = self.platform_index(platform);
                self.checker.flights.restart(p);
            }
            for station in (0..self.stations.len()).filter(|&s| self.stations[s].group == g) {
                self.checker.restart(station, now);
                self.upstreams[station].restarted(now);
            }
            let fair = self.fair.as_mut().expect("checked above");
            // The buffers outlive the process: the new path is built over them.
            let kept = std::mem::replace(fair.shells[g].buffer_mut(), GroupBuffer::new(Vec::new())).into_buffers();
            let shell =
                path_over(&group, &self.services, &self.local_limits, self.retry, kept).map_err(|e| self.fail(e))?;
            let fair = self.fair.as_mut().expect("checked above");
            fair.shells[g] = shell;
            fair.out.retain(|&(q, _), _| q != g);
            fair.eras[g] = fair.eras[g].wrapping_add(1);
            fair.checked_at[g] = 0;
            self.wake_at[g] = None;
            self.trace.push_fmt(format_args!(
                "t={now} restart platform={} cut={}",
                match group.platforms.as_slice() {
                    [only] => only.as_str(),
                    _ => group.name(),
                },
                cut.len()
            ));
        }
        Ok(())
    }
}
