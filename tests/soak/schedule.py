"""The soak's schedule and its prober's decisions, as pure functions: no clock, no I/O, no
randomness. `soak.py` drives them with real time; `test_schedule.py` drives them with a
seeded model of the server and the clients and checks the guarantee they make together.

The guarantee: at any run length from `MIN_RUN_S` (60 s) up (the test checks 60 to 1800 s,
both modes), every platform gets traffic in every phase — a call started in the phase, and
a request reaching its fake within the phase — under these assumptions about the server,
which the soak's configuration keeps (and the model draws within):
- a platform is unreachable only at the start of a phase, for at most `HOLD_MAX_S` after
  the phase began (a hold carried over from the phase before: ORI's retired hold,
  `RetiredHoldSecs` 2 in the soak; a storm's `Retry-After` 1 s), or for at most
  `BLOCK_AFTER_EVENT_S` after the phase's event is done (a restarted process, a lease
  (2 s) expiring after its owner's kill, Redis back after a pause or a restart);
- otherwise a call's request reaches its fake within `REACH_MAX_S` of the call's start;
- a call that does not reach its fake (refused, or lost to an outage) ends at most
  `UNBLOCKED_END_S` after the platform is reachable again (the server's own time-outs on
  Redis, 800 ms; a refused connection at once);
- the prober's loop wakes at most `PROBE_LAG_MAX_S` after its `PROBE_TICK_S` sleep.

How it is kept:
- `phase_lengths`: each phase lasts its fraction of the run, but never less than
  `MIN_PHASE_S`; phases above the floor share the rest in proportion to their fractions.
- `phase_ends_at`: a phase's length counts from the end of its event (a kill and restart,
  a Redis restart or pause), so an event never eats into the phase; the run lasts its
  length plus the events' durations.
- `to_probe`: at every tick the prober calls each platform no call has started for in the
  current phase, at once, whether its earlier calls are still out or not (a call of the
  phase before may be stuck in a stall for up to the request time-out); and, until the
  platform's fake has counted a request in the phase, calls it again every
  `PROBE_RETRY_S` while fewer than `PROBE_MAX_OUT_IN_PHASE` of the phase's probes of it
  are out, so a call lost to a hold or an outage is followed by one that reaches. The
  prober's calls out per platform are bounded: `PROBE_MAX_OUT_IN_PHASE` per phase a call
  can outlive (a call is bounded by the request bound, a phase lasts `MIN_PHASE_S`). Besides, each platform is asked something
  every `PROBE_EVERY_S` when no probe of it is out, as steady traffic.

Hence `MIN_PHASE_S` >= max(`HOLD_MAX_S`, `BLOCK_AFTER_EVENT_S`) + max(`PROBE_RETRY_S`,
`UNBLOCKED_END_S`) + `PROBE_TICK_S` + `PROBE_LAG_MAX_S` + `REACH_MAX_S` (checked below at
import).
"""

from __future__ import annotations

from dataclasses import dataclass

# The prober's loop: it wakes every PROBE_TICK_S (late by up to PROBE_LAG_MAX_S on a busy
# machine) and decides with `to_probe`.
PROBE_TICK_S = 0.5
PROBE_LAG_MAX_S = 0.5
# Steady traffic: each platform asked every PROBE_EVERY_S when no probe of it is out.
PROBE_EVERY_S = 1.5
# A platform its fake has not seen in the phase is asked again this often, while fewer
# than PROBE_MAX_OUT_IN_PHASE of the phase's probes of it are out (a call lost to a hold or
# an outage ends soon and makes room; a call stuck in a stall has reached its fake).
PROBE_RETRY_S = 1.0
PROBE_MAX_OUT_IN_PHASE = 4

# What the server may do (see the module's doc): the soak's configuration keeps these.
HOLD_MAX_S = 2.5
BLOCK_AFTER_EVENT_S = 2.5
REACH_MAX_S = 1.5
UNBLOCKED_END_S = 1.0

MIN_PHASE_S = 6.0
assert MIN_PHASE_S >= (max(HOLD_MAX_S, BLOCK_AFTER_EVENT_S) + max(PROBE_RETRY_S, UNBLOCKED_END_S) + PROBE_TICK_S
                       + PROBE_LAG_MAX_S + REACH_MAX_S)


@dataclass(frozen=True)
class Phase:
    """One phase: its share of the run, its name, the fakes' fault settings, and what
    happens to the processes at its start ("", "kill", "kill-owner", "redis-restart",
    "redis-pause")."""

    fraction: float
    name: str
    settings: tuple[str, ...]
    event: str = ""


# Every platform the soak drives, with the name its tool errors must carry.
PLATFORMS = {
    "obv": "OpenBesluitvorming",
    "tk": "Tweede Kamer",
    "rechtspraak": "Rechtspraak",
    "opentk": "OpenTK",
    "ob": "Officiële Bekendmakingen",
    "bwb": "Basiswettenbestand",
    "ori": "Open Raadsinformatie",
    "cvdr": "Lokale regelgeving (CVDR)",
    "eurlex": "EUR-Lex (CELLAR)",
}


def each(setting: str, platforms: list[str] | None = None) -> tuple[str, ...]:
    return tuple(f"{p}:{setting}" for p in (platforms or list(PLATFORMS)))


HALF_A = ["obv", "rechtspraak", "ob", "ori"]
HALF_B = ["tk", "opentk", "bwb", "cvdr", "eurlex"]
QUIRKS = ("ob:overload-every=2", "ob:empty-page-every=3", "opentk:busy=true", "ori:retired=html")

# Each phase first switches every fault off, then sets its own.
PHASES_SINGLE = [
    Phase(0.08, "calm", ()),
    Phase(0.10, "latency spikes", each("latency-ms=900", HALF_A) + each("latency-ms=1500", HALF_B)),
    Phase(0.10, "5xx", each("fail-every=3", HALF_A) + each("fail-every=2", HALF_B)),
    Phase(0.06, "restart", (), "kill"),  # kill -9 at the start of this phase, then start again
    Phase(0.10, "429 storm", each("rate-limit-storm=true")),
    Phase(0.10, "garbage and resets", each("garbage=true", HALF_B) + each("reset-every=4", HALF_A)),
    Phase(0.10, "resets and garbage", each("reset-every=3", HALF_B) + each("garbage=true", HALF_A)),
    Phase(0.10, "stall", each("stall-ms=6000", HALF_A) + each("stall-ms=5000", HALF_B)),
    Phase(0.10, "platform quirks", QUIRKS),
    Phase(0.16, "calm", ()),
]
PHASES_REPLICAS = [
    Phase(0.08, "calm", ()),
    Phase(0.10, "latency spikes", each("latency-ms=900", HALF_A) + each("latency-ms=1500", HALF_B)),
    Phase(0.10, "owner killed", (), "kill-owner"),
    Phase(0.10, "5xx", each("fail-every=3", HALF_A) + each("fail-every=2", HALF_B)),
    Phase(0.10, "redis restarted", (), "redis-restart"),
    Phase(0.10, "429 storm", each("rate-limit-storm=true")),
    Phase(0.10, "redis paused", (), "redis-pause"),
    Phase(0.10, "garbage and resets", each("garbage=true", HALF_B) + each("reset-every=4", HALF_A)),
    Phase(0.10, "platform quirks", QUIRKS),
    Phase(0.12, "calm", ()),
]


def phases(mode: str) -> list[Phase]:
    """The phases of a mode ("single" or "replicas"), in order."""
    return PHASES_REPLICAS if mode == "replicas" else PHASES_SINGLE


def min_run_s(phases: list[Phase]) -> float:
    """The shortest run in which every phase gets its `MIN_PHASE_S`."""
    return MIN_PHASE_S * len(phases)


def phase_lengths(fractions: list[float], run_s: float) -> list[float]:
    """Each phase's length in seconds: its fraction of `run_s`, at least `MIN_PHASE_S`.

    The phases above the floor share what the floored ones leave, in proportion to their
    fractions, so the lengths add up to `run_s` (which must be at least
    `MIN_PHASE_S * len(fractions)`)."""
    if not fractions or any(f <= 0 for f in fractions):
        raise ValueError(f"phase fractions must be positive: {fractions}")
    if run_s < MIN_PHASE_S * len(fractions) - 1e-9:
        raise ValueError(f"{run_s} s is shorter than {len(fractions)} phases of {MIN_PHASE_S} s")
    floored: set[int] = set()
    while True:
        free = [i for i in range(len(fractions)) if i not in floored]
        rest = run_s - MIN_PHASE_S * len(floored)
        share = sum(fractions[i] for i in free)
        lengths = [MIN_PHASE_S if i in floored else rest * fractions[i] / share for i in range(len(fractions))]
        short = [i for i in free if lengths[i] < MIN_PHASE_S]
        if not short:
            return lengths
        floored.update(short)


def phase_ends_at(planned_at: float, event_done_at: float | None, length_s: float) -> float:
    """When a phase ends: `length_s` after the previous phase's planned end
    (`planned_at`), or after its own event is done (`event_done_at`), whichever is later."""
    start = planned_at if event_done_at is None else max(planned_at, event_done_at)
    return start + length_s


@dataclass
class ProbeState:
    """What the prober knows of one platform in the current phase."""

    started_in_phase: int = 0  # calls started in the phase, by the clients and the prober
    reached_in_phase: bool = False  # its fake counted a request since the phase began
    out_in_phase: int = 0  # the prober's calls of this phase still out
    out: int = 0  # the prober's calls still out (of any phase)
    last_probe_at: float | None = None  # when the prober last started a call (any phase)


def to_probe(now: float, states: dict[str, ProbeState]) -> list[str]:
    """The platforms the prober calls now, in the order of `states`."""
    chosen = []
    for platform, s in states.items():
        since = float("inf") if s.last_probe_at is None else now - s.last_probe_at
        if s.started_in_phase == 0:
            chosen.append(platform)  # no call yet in this phase: at once, whatever is out
        elif not s.reached_in_phase and s.out_in_phase < PROBE_MAX_OUT_IN_PHASE and since >= PROBE_RETRY_S:
            chosen.append(platform)  # its fake has not seen the phase yet: again
        elif s.out == 0 and since >= PROBE_EVERY_S:
            chosen.append(platform)  # steady traffic
    return chosen
