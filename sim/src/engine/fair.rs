//! The fair policy: calls through the core's own path and shell (the server's code), the
//! simulated platform answering each send, and the path's events read back.

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::dedup::{FlightId, WaiterId};
use besluitbron_core::path::{
    Action, Arrival, Attempt, Delivery, Failure as PathFailure, Outcome, OutcomeKind, PathEvent, PendingSend, Request,
};
use besluitbron_core::{Instant, SchedulerEvent, SessionKey, Units};

use besluitbron_core::path::Served;

use super::{AdmissionLine, CallState, Engine, Event, Failure, SimError, cache_key, key_text, station_name, wall};
use crate::platform::{Answer, Refusal};
use crate::policy::CallId;
use crate::scenario::{AttemptOutcome, RecordedAttempt};

impl Engine<'_> {
    /// The fair policy: the call goes through its platform's path, as in the server.
    pub(super) fn submit_fair(&mut self, call: CallId, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &self.calls[call as usize];
        // A call without a key is a distinct request, asked under a key of its own.
        let key = c
            .key
            .clone()
            .unwrap_or_else(|| cache_key(c.platform, c.op.as_deref(), &format!("#{}", c.index)));
        let request = Request {
            waiter: WaiterId(u64::from(call)),
            key: key.clone(),
            session: self.workload.sessions[c.session as usize].key.clone(),
            cost: c.cost,
            lane: self.stations[self.station_of(call)].lane,
        };
        let fair = self.fair.as_mut().expect("the fair policy");
        // One process: no lease, so every request enters.
        let Ok(arrival) = fair.shells[p].request(now, wall(now), None, request, (), call) else {
            return Err(self.fail(format!(
                "{}: a request was refused without a lease",
                self.platform_id(p)
            )));
        };
        match arrival {
            Arrival::Cached(payload) => {
                let c = &mut self.calls[call as usize];
                c.served = Some(Served::Cached);
                c.state = CallState::Done;
                self.checker
                    .flights
                    .on_hit(call, &key, &payload)
                    .map_err(|e| self.fail(e))?;
                self.drain_events(p)?;
                self.finish_call(call);
            }
            Arrival::Waiting { led, .. } => {
                self.calls[call as usize].served = Some(if led { Served::Fetched } else { Served::Coalesced });
                self.checker.flights.on_wait(call);
            }
            Arrival::Refused { .. } => {
                self.calls[call as usize].state = CallState::Refused;
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
                        self.platform_id(p)
                    )));
                }
                Action::InvariantBroken { what, .. } => {
                    return Err(self.fail(format!("{}: {what}", self.platform_id(p))));
                }
            }
        }
        let next = self.fair.as_ref().and_then(|f| f.shells[p].poll_timeout(self.now));
        self.set_wake(p, next)
    }

    pub(super) fn set_wake(&mut self, p: usize, next: Option<Instant>) -> Result<(), Box<Failure>> {
        if next != self.wake_at[p] {
            if let Some(at) = next {
                if at <= self.now {
                    return Err(self.fail(format!(
                        "{}: asked to be woken at {at} but nothing went at {}",
                        station_name(self.stations[p]),
                        self.now
                    )));
                }
                self.schedule(at, Event::Wake(p as u8));
            }
            self.wake_at[p] = next;
        }
        Ok(())
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
            .find(|&c| self.workload.sessions[self.calls[c as usize].session as usize].key == *session)
    }

    /// An attempt goes out to the simulated platform. Who pays for it, a refund and a
    /// requeue are the path's decisions, read from its events (`drain_events`).
    pub(super) fn send(&mut self, p: usize, pending: PendingSend<Arc<[u8]>, CallId>) -> Result<(), Box<Failure>> {
        let now = self.now;
        let fair = self.fair.as_mut().expect("the fair policy");
        let Some(out) = fair.shells[p].confirm_send(now, wall(now), None, pending) else {
            return Err(self.fail(format!(
                "{}: an attempt was dropped without a lease",
                self.platform_id(p)
            )));
        };
        let (attempt, key, admission) = (out.attempt, out.key, out.admission);
        // Where the attempt is counted: the flight's calls all ask one key, so one station,
        // the leading call's.
        let leader = out.flight;
        let station = self.station_of(leader);
        self.upstream[station] += 1;
        let cost = admission.as_ref().map_or(self.calls[leader as usize].cost, |a| a.cost);
        let platform = self.platform_id(p);
        if let (Some(a), Some(fair)) = (&admission, self.fair.as_mut()) {
            fair.admissions.push(AdmissionLine {
                at_ms: now.as_millis(),
                platform,
                session: a.session.to_string(),
                call: key.params().get("q").cloned().unwrap_or_default(),
                rule: a.rule,
            });
        }
        self.checker
            .flights
            .on_sent(&key, attempt, p)
            .map_err(|e| self.fail(e))?;
        let recorded = self.recorded_attempt(&key, attempt.flight.0, attempt.number);
        let answer = match &recorded {
            Some(r) => self.platforms[station].receive_recorded(now, cost, r),
            None => self.platforms[station].receive(now, cost),
        };
        match answer {
            Answer::Ok { latency, remaining } => {
                let (ok, retryable) = match recorded {
                    Some(r) => (r.outcome == AttemptOutcome::Ok, r.outcome != AttemptOutcome::Failed),
                    None => (!self.draws_failure(station), self.fail_retryable[station]),
                };
                if let Some(fair) = self.fair.as_mut() {
                    fair.out.insert((p, attempt), key);
                }
                self.schedule(
                    now + latency,
                    Event::Answer {
                        platform: p as u8,
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
                if let Some(payer) = payer {
                    self.calls[payer as usize].platform_429s += 1;
                }
                let reason = match refusal {
                    Refusal::OverLimit => "over-limit",
                    Refusal::Throttled => "throttled",
                };
                let session = session.map_or_else(|| "-".to_owned(), |s| s.to_string());
                self.trace.push(format!(
                    "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={} flight={} \
                     platform={}",
                    retry_after.as_secs(),
                    cost.compact(),
                    attempt.flight.0,
                    station_name(self.stations[station]),
                ));
                // A recorded refusal comes back after its recorded latency, as it did.
                let latency = recorded
                    .filter(|r| r.outcome == AttemptOutcome::RateLimited)
                    .map_or(0, |r| r.latency_ms);
                if latency > 0 {
                    let fair = self.fair.as_mut().expect("the fair policy");
                    fair.out.insert((p, attempt), key);
                    self.schedule(
                        now + Duration::from_millis(latency),
                        Event::Refused {
                            platform: p as u8,
                            station: station as u8,
                            attempt,
                            retry_after,
                        },
                    );
                } else {
                    self.refusal_arrives(p, station, attempt, &key, retry_after);
                }
            }
        }
        Ok(())
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
        let c = &mut self.calls[call as usize];
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
            if let Some(line) = self.event_line(p, &event, &mut failure) {
                self.trace.push(line);
            }
        }
        match failure {
            Some(e) => Err(self.fail(e)),
            None => Ok(()),
        }
    }

    /// The trace line of path `p`'s `event`, if it has one; the checker hears of the
    /// queueing, admissions and cancellations, and a check that fails goes to `failure`.
    fn event_line(&mut self, p: usize, event: &PathEvent, failure: &mut Option<String>) -> Option<String> {
        let platform = self.platform_id(p);
        match event {
            PathEvent::Hit { at, session, key } => Some(format!(
                "t={at} session={session} hit key={} platform={platform}",
                key_text(key)
            )),
            PathEvent::Lead {
                at,
                session,
                flight,
                key,
            } => (!key_text(key).starts_with('#')).then(|| {
                format!(
                    "t={at} session={session} lead flight={} key={} platform={platform}",
                    flight.0,
                    key_text(key)
                )
            }),
            PathEvent::Coalesce {
                at,
                session,
                flight,
                queued,
            } => Some(format!(
                "t={at} session={session} coalesce flight={} queued={queued} platform={platform}",
                flight.0
            )),
            PathEvent::Queue { .. } => Some(self.queue_line(p, event)),
            PathEvent::Send { .. } => Some(self.send_line(p, event, failure)),
            PathEvent::Cancel { lane, at, entry, .. } => {
                let station = self.station(p, *lane);
                let platform = station_name(self.stations[station]);
                self.checker.on_cancel(station, *entry);
                Some(format!(
                    "{} platform={platform}",
                    SchedulerEvent::Cancel { at: *at, entry: *entry }
                ))
            }
            PathEvent::CancelCall { lane, at, call, .. } => {
                let station = self.station(p, *lane);
                let platform = station_name(self.stations[station]);
                self.checker.on_cancel_call(station, *call);
                Some(format!("t={at} cancel-flight flight={call} platform={platform}"))
            }
            PathEvent::Refuse {
                at,
                session,
                reason,
                retry_at,
                ..
            } => Some(format!(
                "{} platform={platform}",
                SchedulerEvent::Refuse {
                    at: *at,
                    session: session.clone(),
                    reason: *reason,
                    retry_at: *retry_at,
                }
            )),
            PathEvent::Refund { at, session, cost, .. } => Some(format!(
                "t={at} session={session} refund cost={} platform={platform}",
                cost.compact()
            )),
            PathEvent::Retry {
                at,
                flight,
                failed,
                until,
            } => Some(format!(
                "t={at} retry flight={} failed={failed} until={until} platform={platform}",
                flight.0
            )),
            PathEvent::Outcome { .. } => self.outcome_line(p, event),
        }
    }

    /// A call queued at its lane's scheduler (or a session joining a queued call), told
    /// to the checker, as a trace line.
    fn queue_line(&mut self, p: usize, event: &PathEvent) -> String {
        let PathEvent::Queue {
            lane,
            at,
            session,
            entry,
            call,
            joined,
            cost,
        } = event
        else {
            unreachable!("called for a queue event");
        };
        let station = self.station(p, *lane);
        let platform = station_name(self.stations[station]);
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        if let Some(&s) = fair.session_index.get(session) {
            self.checker.on_queue(station, s, *entry, *call, *cost, *at);
        }
        if *joined {
            format!("t={at} session={session} join ticket={entry} flight={call} platform={platform}")
        } else {
            let e = SchedulerEvent::Queue {
                at: *at,
                session: session.clone(),
                entry: *entry,
                cost: *cost,
            };
            format!("{e} platform={platform}")
        }
    }

    /// An attempt sent: its admission checked against the lane's scheduler (a failed
    /// check goes to `failure`), as a trace line.
    fn send_line(&mut self, p: usize, event: &PathEvent, failure: &mut Option<String>) -> String {
        let PathEvent::Send {
            lane,
            at,
            session,
            cost,
            admission,
            ..
        } = event
        else {
            unreachable!("called for a send event");
        };
        let Some(a) = admission else {
            return format!(
                "t={at} session={session} admit cost={} via=unlimited waited=0.000s platform={}",
                cost.compact(),
                self.platform_id(p)
            );
        };
        let station = self.station(p, *lane);
        let platform = station_name(self.stations[station]);
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        let s = fair.session_index.get(&a.session).copied();
        let scheduler = fair.shells[p].path().scheduler(*lane);
        if let Err(e) = self.checker.on_admit(station, s, a, scheduler) {
            failure.get_or_insert(e);
        }
        format!("{} platform={platform}", SchedulerEvent::Admit(a.clone()))
    }

    /// A flight's outcome as a trace line: for a keyed flight the outcome itself, for an
    /// unkeyed one the answer its leader got (nothing when it got none).
    fn outcome_line(&self, p: usize, event: &PathEvent) -> Option<String> {
        let PathEvent::Outcome {
            at,
            flight,
            kind,
            waiters,
            again,
        } = event
        else {
            unreachable!("called for an outcome event");
        };
        let platform = self.platform_id(p);
        let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
        // The call that led a flight: its data in the shell while the flight is under way.
        let leader = fair.shells[p].flight(*flight).copied();
        if leader.is_none_or(|c| self.calls[c as usize].key.is_some()) {
            let again = if again.is_empty() {
                String::new()
            } else {
                format!(" again={}", again.len())
            };
            Some(format!(
                "t={at} outcome={} flight={} waiters={waiters}{again} platform={platform}",
                kind.as_str(),
                flight.0
            ))
        } else {
            leader.filter(|_| *kind == OutcomeKind::Ok).map(|c| {
                format!(
                    "t={at} session={} answer platform={platform}",
                    self.workload.sessions[self.calls[c as usize].session as usize].key
                )
            })
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
                    let c = &mut self.calls[payer as usize];
                    c.paid = true;
                    c.charged = admission.as_ref().map_or(*cost, |a| a.cost);
                }
                let Some(fair) = self.fair.as_ref() else { return };
                let waiting: Vec<CallId> = fair.shells[p]
                    .waiters_of(attempt.flight)
                    .map(|(w, ())| CallId::try_from(w.0).expect("waiter ids are call ids"))
                    .collect();
                for w in waiting {
                    let c = &mut self.calls[w as usize];
                    if c.state == CallState::Waiting {
                        c.state = CallState::Sent;
                        c.admitted_at = Some(*at);
                    }
                }
            }
            PathEvent::Refund { flight, session, .. } => {
                // The path gave the charge back: the session did not pay for it.
                if let Some(payer) = self.payer(p, *flight, session) {
                    let c = &mut self.calls[payer as usize];
                    c.paid = false;
                    c.charged = Units::ZERO;
                }
            }
            PathEvent::Outcome { at, again, .. } => {
                // The waiters that wait once more after a 429.
                for w in again {
                    let c = &mut self.calls[usize::try_from(w.0).expect("waiter ids are call ids")];
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
