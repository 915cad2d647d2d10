#!/usr/bin/env python3
"""Property tests of the soak's schedule and prober (`schedule.py`): at any run length from
60 to 1800 s, in both modes, every platform gets traffic in every phase — a call started in
the phase, and a request reaching its fake within it.

A seeded discrete-event model stands in for the server and the clients: phases as the soak
runs them (`phase_lengths`, `phase_ends_at`, with random event durations and random delays
in switching), platforms unreachable at a phase's start for random spans within the bounds
`schedule.py` states (holds, the aftermath of an event), calls whose requests reach the
fake within `REACH_MAX_S` when the platform is reachable (and never otherwise) and then
take anything up to the request bound, a prober that wakes late by random amounts and asks
`to_probe`, and a random number of clients calling random platforms at random times. A
violation prints the case (mode, length, seed) to run again with `--case`.

Run by `scripts/soak` before the soak itself (so by `scripts/test` and CI):
`python3 tests/soak/test_schedule.py` (no dependencies). `--cases N` checks more cases.
"""

from __future__ import annotations

import heapq
import random
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import schedule  # noqa: E402
from schedule import ProbeState  # noqa: E402

PLATFORMS = list(schedule.PLATFORMS)
# soak.py's REQUEST_BOUND_S (soak.py itself needs httpx2 and reads the environment).
REQUEST_BOUND_S = 50.0
# How late the soak's main loop may switch a phase (it asks the fakes for their counts and
# sets their faults first).
SWITCH_LAG_MAX_S = 0.5
# How long an event may take (a restart of a debug build on a busy machine, a Redis pause).
EVENT_MAX_S = 12.0


def soak_phases(mode: str) -> list[schedule.Phase]:
    return schedule.phases(mode)


Decide = Callable[[float, dict[str, ProbeState]], list[str]]


class Model:
    """One run of the model: returns the violations (empty when the guarantee held)."""

    def __init__(self, mode: str, run_s: float, seed: int, decide: Decide = schedule.to_probe,
                 lengths: Callable[[list[float], float], list[float]] = schedule.phase_lengths,
                 event_first: bool = True) -> None:
        self.rng = random.Random(seed)
        self.phases = soak_phases(mode)
        self.lengths = lengths([p.fraction for p in self.phases], run_s)
        self.decide = decide
        self.event_first = event_first
        self.events: list[tuple[float, int, str, tuple]] = []
        self.seq = 0
        # Per phase index: when its window began; per platform the calls started and reached.
        self.phase_at: list[float] = []
        self.phase = -1
        self.started: list[dict[str, int]] = []
        self.reached: list[dict[str, int]] = []
        self.blocked_until: dict[str, float] = {p: 0.0 for p in PLATFORMS}
        self.states = {p: ProbeState() for p in PLATFORMS}
        self.over = False
        self.probes_out_max = 0

    def at(self, t: float, kind: str, *data: object) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, data))

    def run(self) -> list[str]:
        r = self.rng
        self.at(0.0, "phase", 0, 0.0)
        self.at(r.uniform(0, schedule.PROBE_TICK_S), "tick")
        for c in range(r.choice([0, 0, 1, 4, 16, 32])):
            self.at(r.uniform(0, 2), "client", c)
        end = None
        while self.events:
            t, _, kind, data = heapq.heappop(self.events)
            if kind == "phase":
                index, planned_at = data
                self.begin_phase(t, index, planned_at)
            elif kind == "end":
                self.over, end = True, t
            elif kind == "tick" and not self.over:
                self.tick(t)
            elif kind == "client" and not self.over:
                platform = r.choice(PLATFORMS)
                done = self.call(t, platform, prober=False)
                self.at(done + r.uniform(0.05, 0.6), "client", *data)
            elif kind == "reach":
                (platform,) = data
                if self.phase >= 0 and not (end is not None and t >= end):
                    self.reached[self.phase][platform] += 1
                    self.states[platform].reached_in_phase = True
            elif kind == "done":
                platform, phase = data
                self.states[platform].out -= 1
                if phase == self.phase:
                    self.states[platform].out_in_phase -= 1
        return self.violations()

    def begin_phase(self, t: float, index: int, planned_at: float) -> None:
        r = self.rng
        if index == len(self.phases):
            self.at(t, "end")
            self.phase_at.append(t)
            return
        phase = self.phases[index]
        switched = t + r.uniform(0, SWITCH_LAG_MAX_S)
        # Holds carried over from the phase before; an event and its aftermath.
        for p in PLATFORMS:
            if r.random() < 0.3:
                self.blocked_until[p] = max(self.blocked_until[p], switched + r.uniform(0, schedule.HOLD_MAX_S))
        event_done = None
        if phase.event:
            event_done = switched + r.uniform(0, EVENT_MAX_S)
            for p in PLATFORMS:
                self.blocked_until[p] = max(self.blocked_until[p],
                                            event_done + r.uniform(0, schedule.BLOCK_AFTER_EVENT_S))
        # The window of the phase begins when the soak switches (snapshot, faults, label).
        self.phase = index
        self.phase_at.append(switched)
        self.started.append({p: 0 for p in PLATFORMS})
        self.reached.append({p: 0 for p in PLATFORMS})
        for s in self.states.values():
            s.started_in_phase, s.reached_in_phase, s.out_in_phase = 0, False, 0
        if self.event_first:
            ends = schedule.phase_ends_at(planned_at, event_done, self.lengths[index])
        else:
            ends = planned_at + self.lengths[index]  # the old schedule: events eat into the phase
        self.at(max(ends, switched), "phase", index + 1, ends)

    def call(self, t: float, platform: str, prober: bool) -> float:
        """A call started at `t`; returns when it ends."""
        r = self.rng
        self.started[self.phase][platform] += 1
        self.states[platform].started_in_phase += 1
        if t < self.blocked_until[platform]:
            # Refused or lost without reaching the fake; ends by the block's end or soon after.
            done = t + r.uniform(0, self.blocked_until[platform] - t + schedule.UNBLOCKED_END_S)
        else:
            reach = t + r.uniform(0, schedule.REACH_MAX_S)
            self.at(reach, "reach", platform)
            # Mostly quick, sometimes stuck up to the request bound (a stall, a queue).
            done = reach + (r.uniform(0, 2) if r.random() < 0.8 else r.uniform(0, REQUEST_BOUND_S))
        if prober:
            self.states[platform].out += 1
            self.states[platform].out_in_phase += 1
            self.at(done, "done", platform, self.phase)
        return done

    def tick(self, t: float) -> None:
        for platform in self.decide(t, self.states):
            s = self.states[platform]
            s.last_probe_at = t
            self.call(t, platform, prober=True)
        self.probes_out_max = max(self.probes_out_max, max(s.out for s in self.states.values()))
        self.at(t + schedule.PROBE_TICK_S + self.rng.uniform(0, schedule.PROBE_LAG_MAX_S), "tick")

    def violations(self) -> list[str]:
        out = []
        for i, phase in enumerate(self.phases):
            span = self.phase_at[i + 1] - self.phase_at[i]
            for p in PLATFORMS:
                if self.started[i][p] == 0:
                    out.append(f"phase {i + 1}. {phase.name} ({span:.1f} s): no call of {p} started")
                if self.reached[i][p] == 0:
                    out.append(f"phase {i + 1}. {phase.name} ({span:.1f} s): no request of {p} reached its fake")
        return out


def cases(n: int, seed: int) -> list[tuple[str, float, int]]:
    """`n` cases over both modes and lengths 60..1800 s, the edges always among them."""
    r = random.Random(seed)
    out = [(mode, float(secs), s) for mode in ("single", "replicas") for secs in (60, 61, 90, 150, 120, 1800)
           for s in range(3)]
    while len(out) < n:
        out.append((r.choice(["single", "replicas"]), round(r.uniform(60, 1800), 1), r.randrange(1 << 30)))
    return out


# ---------------------------------------------------------------------------------------
# The tests.


def qc_phase_lengths_add_up_and_keep_the_floor() -> None:
    r = random.Random(43)
    for mode in ("single", "replicas"):
        fractions = [p.fraction for p in soak_phases(mode)]
        for _ in range(2000):
            secs = r.uniform(60, 1800)
            lengths = schedule.phase_lengths(fractions, secs)
            assert abs(sum(lengths) - secs) < 1e-6, (mode, secs, lengths)
            assert min(lengths) >= schedule.MIN_PHASE_S - 1e-9, (mode, secs, lengths)
            # A phase of a larger share is never the shorter one.
            for (fa, la), (fb, lb) in zip(zip(fractions, lengths), zip(fractions[1:], lengths[1:])):
                assert (fa - fb) * (la - lb) >= -1e-9, (mode, secs, fractions, lengths)
        assert schedule.min_run_s(soak_phases(mode)) <= 60.0, mode


def qc_every_platform_has_traffic_in_every_phase(n: int = 240, seed: int = 43) -> None:
    failed = []
    for mode, secs, s in cases(n, seed):
        model = Model(mode, secs, s)
        v = model.run()
        if v:
            failed.append(f"--case {mode} {secs} {s}: {v[:3]}")
        # The prober's calls out per platform stay bounded.
        bound = (schedule.PROBE_MAX_OUT_IN_PHASE + 1) * (int(REQUEST_BOUND_S // schedule.MIN_PHASE_S) + 2)
        assert model.probes_out_max <= bound, (mode, secs, s, model.probes_out_max)
    assert not failed, "\n".join(failed[:10])


def old_prober(now: float, states: dict[str, ProbeState]) -> list[str]:
    """The prober before issue 43: each platform every 1.5 s, one call out at a time."""
    return [p for p, s in states.items()
            if s.out == 0 and (s.last_probe_at is None or now - s.last_probe_at >= schedule.PROBE_EVERY_S)]


def old_lengths(fractions: list[float], run_s: float) -> list[float]:
    return [f * run_s for f in fractions]


def regression_issue_43_the_old_prober_left_a_phase_without_calls() -> None:
    """`SOAK_SECS=60`: "phase 'stall': no client called ['obv']" — the old prober (one call
    out per platform) and schedule (plain fractions, events inside the phase) fail the
    model at 60 s, so the model can see what failed the soak."""
    found = [s for s in range(40) if Model("single", 60.0, s, decide=old_prober, lengths=old_lengths,
                                          event_first=False).run()]
    assert found, "the model finds the old prober's failure"
    # And each of the new parts alone is not enough: the old prober on the new schedule.
    found = [s for s in range(40) if Model("single", 60.0, s, decide=old_prober).run()]
    assert found, "the new schedule alone does not guarantee traffic"


TESTS = [
    qc_phase_lengths_add_up_and_keep_the_floor,
    qc_every_platform_has_traffic_in_every_phase,
    regression_issue_43_the_old_prober_left_a_phase_without_calls,
]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--case"]:
        mode, secs, seed = argv[1], float(argv[2]), int(argv[3])
        v = Model(mode, secs, seed).run()
        print("\n".join(v) or "no violation")
        return 1 if v else 0
    n = int(argv[argv.index("--cases") + 1]) if "--cases" in argv else 240
    failed = 0
    for test in TESTS:
        try:
            if test is qc_every_platform_has_traffic_in_every_phase:
                test(n)
            else:
                test()
            print(f"ok {test.__name__}")
        except AssertionError as e:
            failed += 1
            print(f"FAILED {test.__name__}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
