//! The fair policy: calls through the core's own path and shell (the server's code), one
//! path per budget group, the simulated service answering each send, and the path's events
//! read back.

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::dedup::{FlightId, WaiterId};
use besluitbron_core::path::{
    Action, Arrival, Attempt, Delivery, Failure as PathFailure, Feedback, Keep, Lane, Outcome, OutcomeKind, PathEvent,
    PendingSend, Request,
};
use besluitbron_core::{AdmissionRecord, CallTicket, EntryTicket, Instant, SchedulerEvent, SessionKey, Units};

use besluitbron_core::path::Served;

use super::{
    AdmissionLine, CallState, Engine, Event, Failure, FlightData, PATH_CHECK_SPACING, PathChecks, SimError, UNRANKED,
    distinct_key, is_distinct, key_text, wall,
};
use crate::platform::Answer;
use crate::policy::CallId;
use crate::scenario::{AttemptOutcome, RecordedAttempt};
use crate::trace::Trace;

impl Engine<'_> {
    /// The fair policy: the call goes through its budget group's path `p`, on its
    /// service's lane, as in the server.
    pub(super) fn submit_fair(&mut self, call: CallId, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &self.calls[call];
        // A call without a key is a distinct request, asked under a key of its own.
        let key = c
            .key
            .as_deref()
            .cloned()
            .unwrap_or_else(|| distinct_key(c.platform, c.op.as_deref(), c.index));
        let station = self.station_of(call);
        let session = self.session_key(c.session).clone();
        let data = FlightData {
            leader: call,
            platform: c.platform,
            station,
            cost: c.cost,
            keyed: c.key.is_some(),
            session: session.clone(),
        };
        let request = Request {
            waiter: WaiterId(u64::from(call)),
            key,
            session,
            cost: c.cost,
            lane: self.stations[station].lane,
        };
        let fair = self.fair.as_mut().expect("the fair policy");
        // One process: no lease, so every request enters.
        let Ok(arrival) = fair.shells[p].request(now, wall(now), None, request, (), data) else {
            return Err(self.fail(format!("{}: a request was refused without a lease", self.path_name(p))));
        };
        match arrival {
            Arrival::Cached(payload) => {
                let c = &mut self.calls[call];
                c.served = Some(Served::Cached);
                c.state = CallState::Done;
                // A distinct call is never answered from the buffer: the check says so.
                let key = c
                    .key
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| distinct_key(c.platform, c.op.as_deref(), c.index));
                self.checker
                    .flights
                    .on_hit(call, &key, &payload)
                    .map_err(|e| self.fail(e))?;
                self.drain_events(p)?;
                self.finish_call(call);
            }
            Arrival::Waiting { led, .. } => {
                self.calls[call].served = Some(if led { Served::Fetched } else { Served::Coalesced });
                self.checker.flights.on_wait(call);
            }
            Arrival::Refused { .. } => {
                self.calls[call].state = CallState::Refused;
                self.drain_events(p)?;
                self.finish_call(call);
            }
        }
        self.settle(p)
    }

    /// Takes path `p`'s actions and events until it has none, then schedules its wake.
    pub(super) fn settle(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // Bounded: each pass sends, delivers or ends at least one flight's step, and a call
        // can only come back (after a 429 or a failure) behind a later instant.
        loop {
            self.drain_events(p)?;
            let Some(action) = self.fair.as_mut().and_then(|f| f.shells[p].poll_action()) else {
                break;
            };
            match action {
                Action::Send(pending) => self.send(p, pending)?,
                Action::Deliver { waiter, delivery, .. } => self.deliver(waiter, delivery)?,
                Action::Moved { waiter, .. } => {
                    return Err(self.fail(format!(
                        "{}: waiter {waiter:?} moved without a lease",
                        self.path_name(p)
                    )));
                }
                Action::InvariantBroken { what, .. } => {
                    return Err(self.fail(format!("{}: {what}", self.path_name(p))));
                }
            }
        }
        self.check_path(p)?;
        let next = self.fair.as_ref().and_then(|f| f.shells[p].poll_timeout(self.now));
        self.set_wake(p, next)
    }

    /// The path's own invariants (the shell's, the path's and every lane scheduler's),
    /// once the steps since the last check have all been taken: after every step, or at
    /// bounded cost per step ([`PathChecks`]).
    fn check_path(&mut self, p: usize) -> Result<(), Box<Failure>> {
        let every_step = self.keep.path_checks == PathChecks::EveryStep;
        let Some(fair) = self.fair.as_mut() else { return Ok(()) };
        let shell = &fair.shells[p];
        let steps = shell.stats().steps;
        let since = steps - fair.checked_at[p];
        if since == 0 {
            return Ok(());
        }
        if !every_step {
            let path = shell.path();
            let remembered: usize = path
                .lanes()
                .filter_map(|(_, _, s)| s)
                .map(|s| s.tracked_sessions())
                .sum();
            let held = (path.waiting() + path.in_flight() + remembered) as u64;
            let spacing = if held <= 1 { 1 } else { PATH_CHECK_SPACING * held };
            if since < spacing {
                return Ok(());
            }
        }
        fair.checked_at[p] = steps;
        fair.path_checks += 1;
        match shell.check_invariants() {
            Ok(()) => Ok(()),
            Err(what) => Err(self.fail(format!("{}: {what}", self.path_name(p)))),
        }
    }

    pub(super) fn set_wake(&mut self, p: usize, next: Option<Instant>) -> Result<(), Box<Failure>> {
        let next = match self.fair {
            Some(_) => next.map(|at| self.server_wake(p, at)),
            None => next,
        };
        if next != self.wake_at[p] {
            if let Some(at) = next {
                if at <= self.now {
                    let name = match self.fair {
                        Some(_) => self.path_name(p).to_owned(),
                        None => self.station_names[p].clone(),
                    };
                    return Err(self.fail(format!(
                        "{name}: asked to be woken at {at} but nothing went at {}",
                        self.now
                    )));
                }
                self.schedule(at, Event::Wake(p as u8));
            }
            self.wake_at[p] = next;
        }
        Ok(())
    }

    /// When path `p` wakes for a wake due at `at`: in a recorded trace, at the server's
    /// next recorded send of the path's platforms when that comes at most
    /// [`SERVER_WAKE_LAG_MS`] later — the server's task wakes some milliseconds after a unit
    /// is due (its timer, then a core), and a call that reached the task in between was
    /// queued before its decision; the replay takes that lateness from the recording as it
    /// takes latencies, and decides itself who goes. Otherwise at `at`.
    fn server_wake(&self, p: usize, at: Instant) -> Instant {
        let Some(sends) = self.recorded_sends.get(p) else {
            return at;
        };
        let ms = at.as_millis();
        match sends.get(sends.partition_point(|&s| s < ms)) {
            Some(&s) if s - ms <= SERVER_WAKE_LAG_MS => at.max(Instant::from_millis(s)),
            _ => at,
        }
    }

    /// The first call of `session` still waiting for `flight` of path `p`: the one marked
    /// as having paid for the flight's attempt (or as refunded). Matched by fairness key,
    /// which several of the workload's sessions share when the identity rule makes them
    /// one caller (users behind one address).
    pub(super) fn payer(&self, p: usize, flight: FlightId, session: &SessionKey) -> Option<CallId> {
        let fair = self.fair.as_ref()?;
        fair.shells[p]
            .waiters_of(flight)
            .map(|(w, ())| CallId::try_from(w.0).expect("waiter ids are call ids"))
            .find(|&c| self.session_key(self.calls[c].session) == session)
    }

    /// An attempt goes out to the simulated service. Who pays for it, a refund and a
    /// requeue are the path's decisions, read from its events (`drain_events`).
    pub(super) fn send(&mut self, p: usize, pending: PendingSend<Arc<[u8]>, FlightData>) -> Result<(), Box<Failure>> {
        let now = self.now;
        let fair = self.fair.as_mut().expect("the fair policy");
        let Some(out) = fair.shells[p].confirm_send(now, wall(now), None, pending) else {
            return Err(self.fail(format!("{}: an attempt was dropped without a lease", self.path_name(p))));
        };
        let (attempt, key, admission) = (out.attempt, out.key, out.admission);
        // Where the attempt is counted: the lane it went out on, the service the flight's
        // calls all reach.
        let leader = out.flight.leader;
        let station = self.lane_stations[p][usize::from(out.lane.0)];
        debug_assert_eq!(
            station, out.flight.station,
            "a flight goes to its leading call's service"
        );
        let platform = self.platform_index(key.platform());
        let k = self.place_of(platform, station);
        self.upstream[station] += 1;
        self.platform_upstream[platform] += 1;
        let cost = admission.as_ref().map_or(out.flight.cost, |a| a.cost);
        if let Some(a) = &admission {
            self.note_admission(station, a, &key);
        }
        self.checker
            .flights
            .on_sent(&key, attempt, platform)
            .map_err(|e| self.fail(e))?;
        let recorded = self.recorded_attempt(&key, attempt.flight.0, attempt.number);
        let host = &mut self.hosts[platform][k];
        let answer = match &recorded {
            Some(r) => self.upstreams[station].receive_recorded(now, cost, host, r),
            None => self.upstreams[station].receive(now, cost, host),
        };
        match answer {
            Answer::Ok { latency, remaining } => {
                let (ok, retryable) = match recorded {
                    Some(r) => (r.outcome == AttemptOutcome::Ok, r.outcome != AttemptOutcome::Failed),
                    None => (!self.draws_failure(platform, k), self.fail_retryable[platform]),
                };
                let fair = self.fair.as_mut().expect("the fair policy");
                fair.out.insert((p, attempt), key);
                let era = fair.eras[p];
                // A recorded answer is taken at its instant in the server's order.
                let rank = recorded.and_then(|r| r.step).unwrap_or(UNRANKED);
                self.schedule_ranked(
                    now + latency,
                    rank,
                    Event::Answer {
                        path: p as u8,
                        era,
                        attempt,
                        ok,
                        retryable,
                        remaining,
                    },
                );
            }
            Answer::TooMany { refusal, retry_after } => {
                let session = admission.as_ref().map(|a| a.session.clone());
                let payer = match &session {
                    Some(s) => self.payer(p, attempt.flight, s),
                    None => Some(leader),
                };
                // The leader of a flight on a lane without a limit may have left meanwhile.
                if let Some(c) = payer.and_then(|payer| self.calls.get_mut(payer)) {
                    c.platform_429s += 1;
                }
                let reason = refusal.as_str();
                let session = session.map_or_else(|| "-".to_owned(), |s| s.to_string());
                self.trace.push_fmt(format_args!(
                    "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={} flight={} \
                     platform={}",
                    retry_after.as_secs(),
                    cost.compact(),
                    attempt.flight.0,
                    self.station_names[station],
                ));
                self.refusal_comes_back(p, station, attempt, key, retry_after, recorded);
            }
        }
        Ok(())
    }

    /// A refusal of path `p`'s `attempt` of `key` at `station`: a recorded one comes back
    /// after its recorded latency, as it did, in the server's order among the events of
    /// that instant; one within the millisecond, or the model's, at once.
    fn refusal_comes_back(
        &mut self,
        p: usize,
        station: usize,
        attempt: Attempt,
        key: CacheKey,
        retry_after: Duration,
        recorded: Option<RecordedAttempt>,
    ) {
        let latency = recorded
            .filter(|r| r.outcome == AttemptOutcome::RateLimited)
            .map_or(0, |r| r.latency_ms);
        if latency == 0 {
            self.refusal_arrives(p, station, attempt, &key, retry_after);
            return;
        }
        let fair = self.fair.as_mut().expect("the fair policy");
        fair.out.insert((p, attempt), key);
        let era = fair.eras[p];
        let rank = recorded.and_then(|r| r.step).unwrap_or(UNRANKED);
        let refused = Event::Refused {
            path: p as u8,
            era,
            station: station as u8,
            attempt,
            retry_after,
        };
        self.schedule_ranked(self.now + Duration::from_millis(latency), rank, refused);
    }

    /// Admission `a` at station `station` for `key`, kept when the run keeps admissions.
    fn note_admission(&mut self, station: usize, a: &AdmissionRecord, key: &CacheKey) {
        let service = self.stations[station].id;
        if let Some(admissions) = self.fair.as_mut().and_then(|f| f.admissions.as_mut()) {
            admissions.push(AdmissionLine {
                at_ms: self.now.as_millis(),
                platform: key.platform(),
                service,
                session: a.session.to_string(),
                call: key_text(key).to_owned(),
                rule: a.rule,
            });
        }
    }

    /// A service's answer to attempt `attempt` of path `p` (of the process `era`) arrives:
    /// the path hears the outcome, the flight checker what was stored.
    pub(super) fn answer_arrives(
        &mut self,
        p: usize,
        era: u16,
        attempt: Attempt,
        ok: bool,
        retryable: bool,
        remaining: Option<(Units, Duration)>,
    ) -> Result<(), Box<Failure>> {
        if self.fair.as_ref().is_some_and(|f| f.eras[p] != era) {
            // An attempt of a process that is gone: its answer reaches nobody.
            return Ok(());
        }
        let key = self.fair.as_mut().and_then(|f| f.out.remove(&(p, attempt)));
        // A distinct call (no key of its own in the workload) is never asked again:
        // its answer is not kept, so the buffer holds only what can be asked twice.
        let distinct = key.as_ref().is_none_or(is_distinct);
        let payload: Arc<[u8]> = Arc::from(format!("flight={}", attempt.flight.0).into_bytes());
        let outcome = if ok {
            Outcome::Success {
                payload,
                feedback: Feedback {
                    remaining: remaining.map(|(units, _)| units),
                    reset: remaining.map(|(_, reset)| reset),
                    keep: if distinct { Keep::Never } else { Keep::Normal },
                    revalidated: false,
                },
            }
        } else if retryable {
            Outcome::Retryable {
                error: SimError::Failed,
                retry_after: None,
            }
        } else {
            Outcome::Failed {
                error: SimError::Failed,
            }
        };
        if let (true, false, Some(key)) = (ok, distinct, &key) {
            let platform = self.platform_index(key.platform());
            self.checker.flights.on_stored(key, attempt.flight, platform);
        }
        if let Some(key) = &key {
            self.checker.flights.on_answered(key);
        }
        let (now, wall) = (self.now, wall(self.now));
        if let Some(fair) = self.fair.as_mut() {
            fair.shells[p].on_outcome(now, wall, attempt, outcome);
        }
        self.settle(p)
    }

    /// A 429 reaches the path: nothing goes to the station before its Retry-After.
    pub(super) fn refusal_arrives(
        &mut self,
        p: usize,
        station: usize,
        attempt: Attempt,
        key: &CacheKey,
        retry_after: Duration,
    ) {
        let now = self.now;
        self.checker.on_retry_after(station, now + retry_after);
        self.checker.flights.on_answered(key);
        let outcome = Outcome::RateLimited {
            retry_after,
            error: SimError::RateLimited,
        };
        let fair = self.fair.as_mut().expect("the fair policy");
        fair.shells[p].on_outcome(now, wall(now), attempt, outcome);
    }

    /// The recorded answer to attempt `number` of replayed flight `token` (a flight id, or
    /// a legacy call's id above 2^63) asking `key`: the k-th flight of the key in the
    /// replay takes the k-th recorded flight's attempts (none when the recording had
    /// fewer: the latency model answers); an attempt beyond the recorded ones is
    /// answered as the flight's last was.
    pub(super) fn recorded_attempt(&mut self, key: &CacheKey, token: u64, number: u32) -> Option<RecordedAttempt> {
        let flights = self.workload.recorded.as_ref().map(|r| &r.flights)?;
        let id = (key.platform(), key.operation().to_owned(), key_text(key).to_owned());
        let recorded = flights.get(&id)?;
        // A flight's first attempt takes the key's next recorded flight, its later attempts
        // the same one. Each platform's path numbers its flights on its own, so the slot is
        // kept per platform and number, and taken afresh by every first attempt.
        let slot = if number <= 1 {
            let next = self.replay_next.entry(id).or_insert(0);
            *next += 1;
            let slot = (*next - 1 < recorded.len()).then_some(*next - 1);
            self.replay_slot.insert((key.platform(), token), slot);
            slot
        } else {
            self.replay_slot.get(&(key.platform(), token)).copied().flatten()
        };
        let attempts = &recorded[slot?];
        let i = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
        attempts.get(i).or_else(|| attempts.last()).copied()
    }

    /// A call gets its answer (or its failure) from the path.
    pub(super) fn deliver(
        &mut self,
        waiter: WaiterId,
        delivery: Delivery<Arc<[u8]>, SimError>,
    ) -> Result<(), Box<Failure>> {
        let call = CallId::try_from(waiter.0).expect("waiter ids are call ids");
        let c = &mut self.calls[call];
        match delivery {
            Delivery::Answer { served, .. } => {
                c.state = CallState::Done;
                if served == Served::Stale {
                    c.served = Some(Served::Stale);
                }
            }
            Delivery::Failed(PathFailure::Platform(_)) => c.state = CallState::Failed,
            Delivery::Failed(PathFailure::QueueFull { .. }) => c.state = CallState::Refused,
        }
        self.checker.flights.on_delivered(call).map_err(|e| self.fail(e))?;
        self.finish_call(call);
        Ok(())
    }

    /// Turns path `p`'s recorded decisions into trace lines, checker notes and the calls'
    /// records: who paid for an attempt (the session of `PathEvent::Send`), whose charge
    /// came back (`PathEvent::Refund`), who waits once more after a 429
    /// (`PathEvent::Outcome`'s `again`).
    pub(super) fn drain_events(&mut self, p: usize) -> Result<(), Box<Failure>> {
        let mut failure: Option<String> = None;
        while let Some(event) = self.fair.as_mut().and_then(|f| f.shells[p].poll_event()) {
            self.record(p, &event);
            self.trace_event(p, &event, &mut failure);
        }
        match failure {
            Some(e) => Err(self.fail(e)),
            None => Ok(()),
        }
    }

    /// Path `p`'s `event` in the trace: a flight's events here, the scheduler's decisions
    /// in [`Engine::trace_decision`] (a check that fails there goes to `failure`). A line
    /// about a key names its platform, one about a flight its leader's platform.
    fn trace_event(&mut self, p: usize, event: &PathEvent, failure: &mut Option<String>) {
        match event {
            PathEvent::Hit { at, session, key } => self.trace.push_fmt(format_args!(
                "t={at} session={session} hit key={} platform={}",
                key_text(key),
                key.platform()
            )),
            PathEvent::Lead {
                at,
                session,
                flight,
                key,
            } => {
                if !is_distinct(key) {
                    self.trace.push_fmt(format_args!(
                        "t={at} session={session} lead flight={} key={} platform={}",
                        flight.0,
                        key_text(key),
                        key.platform()
                    ));
                }
            }
            PathEvent::Coalesce {
                at,
                session,
                flight,
                queued,
            } => {
                let platform = self.flight_platform(p, *flight);
                self.trace.push_fmt(format_args!(
                    "t={at} session={session} coalesce flight={} queued={queued} platform={platform}",
                    flight.0
                ));
            }
            PathEvent::Retry {
                at,
                flight,
                failed,
                until,
            } => {
                let platform = self.flight_platform(p, *flight);
                self.trace.push_fmt(format_args!(
                    "t={at} retry flight={} failed={failed} until={until} platform={platform}",
                    flight.0
                ));
            }
            PathEvent::Outcome {
                at,
                flight,
                kind,
                waiters,
                again,
            } => self.trace_outcome(p, *at, *flight, *kind, *waiters, again.len()),
            PathEvent::Queue { .. }
            | PathEvent::Send { .. }
            | PathEvent::Cancel { .. }
            | PathEvent::CancelCall { .. }
            | PathEvent::Refuse { .. }
            | PathEvent::Refund { .. } => self.trace_decision(p, event, failure),
        }
    }

    /// A decision of path `p`'s schedulers in the trace, and told to the checker: a call
    /// queued (or joining one queued), admitted, withdrawn, refused or given its charge
    /// back. A line about a lane names its station (the service), a refund its flight's
    /// platform, a refusal the group's ([`Engine::group_platform`]). A check that fails
    /// goes to `failure`; a flight's events are not traced here.
    fn trace_decision(&mut self, p: usize, event: &PathEvent, failure: &mut Option<String>) {
        match event {
            PathEvent::Queue {
                lane,
                at,
                session,
                entry,
                call,
                joined,
                cost,
            } => {
                let station = self.lane_station(p, *lane);
                if let Some(s) = self.fair.as_ref().and_then(|f| f.session_of(session)) {
                    self.checker.on_queue(station, s, *entry, *call, *cost, *at);
                }
                let platform = &self.station_names[station];
                if *joined {
                    self.trace.push_fmt(format_args!(
                        "t={at} session={session} join ticket={entry} flight={call} platform={platform}"
                    ));
                } else {
                    queue_line(&mut self.trace, *at, session, *cost, *entry, platform);
                }
            }
            PathEvent::Send {
                lane,
                at,
                session,
                cost,
                admission,
                ..
            } => match admission {
                Some(a) => self.trace_admission(p, *lane, a, failure),
                None => {
                    let station = self.lane_station(p, *lane);
                    unlimited_line(&mut self.trace, *at, session, *cost, &self.station_names[station]);
                }
            },
            PathEvent::Cancel { lane, at, entry, .. } => {
                let station = self.lane_station(p, *lane);
                self.checker.on_cancel(station, *entry);
                cancel_line(&mut self.trace, *at, *entry, &self.station_names[station]);
            }
            PathEvent::CancelCall { lane, at, call, .. } => {
                let station = self.lane_station(p, *lane);
                self.checker.on_cancel_call(station, *call);
                cancel_flight_line(&mut self.trace, *at, *call, &self.station_names[station]);
            }
            PathEvent::Refuse {
                at,
                session,
                reason,
                retry_at,
                ..
            } => {
                let platform = self.group_platform(p);
                self.trace.push_fmt(format_args!(
                    "{} platform={platform}",
                    SchedulerEvent::Refuse {
                        at: *at,
                        session: session.clone(),
                        reason: *reason,
                        retry_at: *retry_at,
                    }
                ));
            }
            PathEvent::Refund {
                at,
                session,
                cost,
                flight,
                ..
            } => {
                let platform = self.flight_platform(p, *flight);
                self.trace.push_fmt(format_args!(
                    "t={at} session={session} refund cost={} platform={platform}",
                    cost.compact()
                ));
            }
            PathEvent::Hit { .. }
            | PathEvent::Lead { .. }
            | PathEvent::Coalesce { .. }
            | PathEvent::Retry { .. }
            | PathEvent::Outcome { .. } => {}
        }
    }

    /// The station of path `p`'s `lane`: the service the lane reaches.
    fn lane_station(&self, p: usize, lane: Lane) -> usize {
        self.lane_stations[p][usize::from(lane.0)]
    }

    /// What a line of path `p` about neither a flight nor a lane names: the group's
    /// platform, or the group when it has several.
    fn group_platform(&self, p: usize) -> &'static str {
        let group = &self.groups[p];
        match group.platforms.as_slice() {
            [only] => only.as_str(),
            _ => group.name(),
        }
    }

    /// The platform of flight `flight` of path `p`: its leading call's, while the flight is
    /// under way, else the group's ([`Engine::group_platform`]).
    fn flight_platform(&self, p: usize, flight: FlightId) -> &'static str {
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        // What the call that led a flight brought: in the shell while the flight is under way.
        match fair.shells[p].flight(flight) {
            Some(d) => d.platform.as_str(),
            None => self.group_platform(p),
        }
    }

    /// Admission `a` on path `p`'s `lane`, checked against the lane's scheduler (a check
    /// that fails goes to `failure`), in the trace.
    fn trace_admission(&mut self, p: usize, lane: Lane, a: &AdmissionRecord, failure: &mut Option<String>) {
        let station = self.lane_station(p, lane);
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        let s = fair.session_of(&a.session);
        let scheduler = fair.shells[p].path().scheduler(lane);
        if let Err(e) = self.checker.on_admit(station, s, a, scheduler) {
            failure.get_or_insert(e);
        }
        admit_line(&mut self.trace, a, &self.station_names[station]);
    }

    /// A flight's outcome on path `p` in the trace: for a keyed flight the outcome itself
    /// (with how many wait `again` after a 429), for a distinct one the answer its leader
    /// got (nothing when it got none); either names the flight's platform.
    fn trace_outcome(
        &mut self,
        p: usize,
        at: Instant,
        flight: FlightId,
        kind: OutcomeKind,
        waiters: usize,
        again: usize,
    ) {
        let platform = self.flight_platform(p, flight);
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        // What the call that led a flight brought: in the shell while the flight is under way.
        let leader = fair.shells[p].flight(flight);
        if leader.is_none_or(|d| d.keyed) {
            if again == 0 {
                self.trace.push_fmt(format_args!(
                    "t={at} outcome={} flight={} waiters={waiters} platform={platform}",
                    kind.as_str(),
                    flight.0
                ));
            } else {
                self.trace.push_fmt(format_args!(
                    "t={at} outcome={} flight={} waiters={waiters} again={again} platform={platform}",
                    kind.as_str(),
                    flight.0,
                ));
            }
        } else if let Some(d) = leader.filter(|_| kind == OutcomeKind::Ok) {
            self.trace
                .line()
                .str("t=")
                .instant(at)
                .str(" session=")
                .str(d.session.as_str())
                .str(" answer platform=")
                .str(d.platform.as_str())
                .end();
        }
    }

    /// The calls' records after decision `event` of path `p`.
    pub(super) fn record(&mut self, p: usize, event: &PathEvent) {
        match event {
            PathEvent::Send {
                at,
                session,
                attempt,
                cost,
                admission,
                ..
            } => {
                // The payer: the first call of the admitted entry's session (the leader's
                // on a lane without a kept limit); every call of the flight is out now.
                if let Some(payer) = self.payer(p, attempt.flight, session) {
                    let c = &mut self.calls[payer];
                    c.paid = true;
                    c.charged = admission.as_ref().map_or(*cost, |a| a.cost);
                }
                let Some(fair) = self.fair.as_ref() else { return };
                for (w, ()) in fair.shells[p].waiters_of(attempt.flight) {
                    let c = &mut self.calls[CallId::try_from(w.0).expect("waiter ids are call ids")];
                    if c.state == CallState::Waiting {
                        c.state = CallState::Sent;
                        c.admitted_at = Some(*at);
                    }
                }
            }
            PathEvent::Refund { flight, session, .. } => {
                // The path gave the charge back: the session did not pay for it.
                if let Some(payer) = self.payer(p, *flight, session) {
                    let c = &mut self.calls[payer];
                    c.paid = false;
                    c.charged = Units::ZERO;
                }
            }
            PathEvent::Outcome { at, again, .. } => {
                // The waiters that wait once more after a 429.
                for w in again {
                    let c = &mut self.calls[CallId::try_from(w.0).expect("waiter ids are call ids")];
                    c.requeued = true;
                    if c.state == CallState::Sent {
                        c.state = CallState::Waiting;
                        c.queued_at = *at;
                        c.admitted_at = None;
                    }
                }
            }
            _ => {}
        }
    }
}

/// The trace line of admission `a` at station `platform`: the core's
/// [`SchedulerEvent::Admit`] line, then the station.
fn admit_line(trace: &mut Trace, a: &AdmissionRecord, platform: &str) {
    trace
        .line()
        .str("t=")
        .instant(a.admitted_at)
        .str(" session=")
        .str(a.session.as_str())
        .str(" admit cost=")
        .compact(a.cost)
        .str(" tokens=")
        .units(a.tokens_after)
        .str(" via=")
        .str(a.rule.as_str())
        .str(" waited=")
        .instant(Instant::ZERO + a.waited())
        .str(" platform=")
        .str(platform)
        .end();
}

/// The trace line of a queued entry: the core's [`SchedulerEvent::Queue`] line, then the
/// station.
fn queue_line(trace: &mut Trace, at: Instant, session: &SessionKey, cost: Units, entry: EntryTicket, platform: &str) {
    trace
        .line()
        .str("t=")
        .instant(at)
        .str(" session=")
        .str(session.as_str())
        .str(" queue cost=")
        .compact(cost)
        .str(" ticket=#")
        .uint(entry.0)
        .str(" platform=")
        .str(platform)
        .end();
}

/// The trace line of a call admitted on a lane without a kept limit.
fn unlimited_line(trace: &mut Trace, at: Instant, session: &SessionKey, cost: Units, platform: &str) {
    trace
        .line()
        .str("t=")
        .instant(at)
        .str(" session=")
        .str(session.as_str())
        .str(" admit cost=")
        .compact(cost)
        .str(" via=unlimited waited=0.000s platform=")
        .str(platform)
        .end();
}

/// The trace line of a withdrawn entry: the core's [`SchedulerEvent::Cancel`] line, then
/// the station.
fn cancel_line(trace: &mut Trace, at: Instant, entry: EntryTicket, platform: &str) {
    trace
        .line()
        .str("t=")
        .instant(at)
        .str(" cancel ticket=#")
        .uint(entry.0)
        .str(" platform=")
        .str(platform)
        .end();
}

/// The trace line of a waiting call withdrawn with all its entries.
fn cancel_flight_line(trace: &mut Trace, at: Instant, call: CallTicket, platform: &str) {
    trace
        .line()
        .str("t=")
        .instant(at)
        .str(" cancel-flight flight=#")
        .uint(call.0)
        .str(" platform=")
        .str(platform)
        .end();
}

/// How much later than due the server's task may act on a path's wake for the replay to
/// take its recorded send as the moment it woke: the soak measures at most 25 ms.
const SERVER_WAKE_LAG_MS: u64 = 60;

#[cfg(test)]
mod tests {
    use besluitbron_core::AdmitRule;

    use super::*;

    /// The lines put together here are the core's scheduler lines, byte for byte.
    #[test]
    fn the_admit_queue_and_cancel_lines_are_the_cores() {
        let session = SessionKey::client("agent-7");
        for (ms, cost, tokens) in [(0, 1_000, 59_000), (1_234_567, 125, 0), (86_400_001, 2_000, 60_000)] {
            let a = AdmissionRecord {
                call: CallTicket(41),
                entry: EntryTicket(42),
                session: session.clone(),
                cost: Units::from_milli(cost),
                requested: Units::from_milli(cost),
                submitted_at: Instant::from_millis(ms / 3),
                admitted_at: Instant::from_millis(ms),
                tokens_after: Units::from_milli(tokens),
                rule: AdmitRule::Fair,
            };
            let mut ours = Trace::new(true);
            admit_line(&mut ours, &a, "obv");
            queue_line(&mut ours, a.admitted_at, &session, a.cost, a.entry, "ob/text");
            let mut cores = Trace::new(true);
            cores.push_fmt(format_args!("{} platform=obv", SchedulerEvent::Admit(a.clone())));
            let q = SchedulerEvent::Queue {
                at: a.admitted_at,
                session: session.clone(),
                entry: a.entry,
                cost: a.cost,
            };
            cores.push_fmt(format_args!("{q} platform=ob/text"));
            assert_eq!(ours.lines(), cores.lines());
        }
        let mut ours = Trace::new(true);
        cancel_line(&mut ours, Instant::from_millis(1_500), EntryTicket(9), "obv");
        let cancel = SchedulerEvent::Cancel {
            at: Instant::from_millis(1_500),
            entry: EntryTicket(9),
        };
        assert_eq!(ours.lines(), [format!("{cancel} platform=obv")]);
        let mut ours = Trace::new(true);
        cancel_flight_line(&mut ours, Instant::from_millis(26_194_911), CallTicket(7_755), "obv");
        let mut formatted = Trace::new(true);
        let (at, call) = (Instant::from_millis(26_194_911), CallTicket(7_755));
        formatted.push_fmt(format_args!("t={at} cancel-flight flight={call} platform=obv"));
        assert_eq!(ours.lines(), formatted.lines());
    }
}
