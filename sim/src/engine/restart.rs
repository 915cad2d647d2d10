//! The server's process restarting in the middle of a recording (the soak kills it and
//! starts it again): the replay does what the server did.
//!
//! At the restart every platform's path of the old process is gone: what still waited or
//! was out in the replay is cut (the calls end withdrawn; an answer to an attempt of the
//! old process reaches nobody, [`super::FairState::eras`]). Each platform gets a new
//! path, as the server's new process makes one: a full bucket, empty queues, no flight —
//! over the buffer the old one left (the server's buffer is a file that outlives its
//! process). The simulated platforms go on as they were: a platform does not restart with
//! the server, and its bucket still holds what the old process spent.
//!
//! Invariants: a call of the old process never reaches the new path; the checker's
//! mirror of each new scheduler starts empty, and the starvation bound covers only waits
//! that begin after the restart.
//!
//! What this module does not do: restart anything under the legacy model (it knows no
//! process), or guess what the server did with requests the recording lacks.

use super::setup::{fresh_buffer, path_over};
use super::{CallState, Engine, Failure};

impl Engine<'_> {
    /// The server's process restarts now.
    pub(super) fn restart(&mut self) -> Result<(), Box<Failure>> {
        if self.fair.is_none() {
            return Ok(());
        }
        let now = self.now;
        let margin = self
            .workload
            .recorded
            .as_ref()
            .map_or_else(Default::default, |r| r.margin);
        for p in 0..self.workload.platforms.len() {
            let id = self.platform_id(p);
            // What the old process still held: cut, in the order the calls were made.
            let cut: Vec<_> = self
                .calls
                .live_ids()
                .into_iter()
                .filter(|&c| self.calls[c].platform == id)
                .collect();
            for &call in &cut {
                self.calls[call].state = CallState::Cancelled;
                self.checker.flights.on_left(call);
                self.finish_call(call);
            }
            self.checker.flights.restart(p);
            let text = self.text_station[p];
            for station in std::iter::once(p).chain(text) {
                self.checker.restart(station, now);
            }
            let spec = &self.workload.platforms[p];
            let local = self.local_limits[p];
            let text_limit = text.and_then(|s| self.local_limits[s]).map(|l| l.with_margin(margin));
            let fair = self.fair.as_mut().expect("checked above");
            let buffer = fair.shells[p].buffer_mut();
            let kept = std::mem::replace(buffer, fresh_buffer(spec));
            let shell = path_over(spec, local, text_limit, Some(kept)).map_err(|e| self.fail(e))?;
            let fair = self.fair.as_mut().expect("checked above");
            fair.shells[p] = shell;
            fair.out.retain(|&(q, _), _| q != p);
            fair.eras[p] = fair.eras[p].wrapping_add(1);
            fair.checked_at[p] = 0;
            self.wake_at[p] = None;
            self.trace.push_fmt(format_args!(
                "t={now} restart platform={} cut={}",
                self.station_names[p],
                cut.len()
            ));
        }
        Ok(())
    }
}
