#!/usr/bin/env python3
"""Soak test of `besluitbron serve` under platform faults, over every served platform.

Starts `besluitbron-sim fakes` and the real server (its embedded store in a temporary data
directory), then lets many simulated clients work for `SOAK_SECS` seconds (default 150):
sessions of both protocol eras (2025-06-18 with initialize and `Mcp-Session-Id`; 2026-07-28
stateless), each from its own client address (`X-Forwarded-For` from a trusted proxy),
doing what assistants do on every platform BesluitBron serves — OpenBesluitvorming, the
Tweede Kamer, Rechtspraak, OpenTK, Officiële Bekendmakingen, the Basiswettenbestand, local
regulations (CVDR) and Open Raadsinformatie (through a mirror) — on `/mcp/<platform>` and `/mcp`: searches, the
records and documents their results name (the `tool` and `id` of each result), later pages
(`next_offset`), reference lists, repeats the buffer answers, a few cancellations, the
cross-platform `search`, resource reads, and people on the search page and `/status`.

Meanwhile the fakes are switched, through their control route, through phases of faults
on every platform: latency spikes, 5xx, 429 storms, garbage bodies, dropped connections,
stalls, and each platform's own quirks (SRU overload diagnostics and empty pages for
Officiële Bekendmakingen, OpenTK's "busy", Open Raadsinformatie's mirror answering as
retired), with calm phases between.

Two modes (`SOAK_MODE`):
- `single`: one server process; at about a third of the run it is killed with SIGKILL and
  started again on the same data directory.
- `replicas`: three replicas on one redis-server of the soak's own (unix socket, no
  persistence), each with its own data directory; clients hold their legacy sessions on
  one replica and send stateless requests to any. Among the phases: the owner of
  OpenBesluitvorming's lease killed with SIGKILL and started again, Redis restarted
  (every shared key lost) and Redis paused (SIGSTOP for a few seconds).

Checked throughout and at the end (each failure is printed, the exit code is 1):
- every platform the fakes serve got traffic in every phase (requests at its fake), and
  clients called it in every phase: a platform the soak does not drive fails it. The
  schedule and the prober guarantee it at any length (`schedule.py`: every phase lasts
  at least `schedule.MIN_PHASE_S` after its event; the prober asks each platform not yet
  called in the phase at once, and again until its fake has counted a request;
  `test_schedule.py` checks this on a model at lengths 60–1800 s);
- no platform 429 caused by BesluitBron: the fakes' 429s less the ones a storm sent;
- no panic in any server process's log;
- every request is answered or clearly refused: a result, a tool error that names the
  platform (and echoes no internal URL), a JSON-RPC error, or an HTTP refusal with its
  reason (429/503 with Retry-After; 404 for a session a restart ended). Every request is
  bounded; a request that hangs past its bound, an HTTP 500, or a broken connection
  outside a kill's window fails the run; the page never answers 500;
- memory levels off: per server process (the last one of each replica), its resident
  memory less what the buffers' memory layers hold (`besluitbron_buffer_memory_bytes`,
  capped per platform) in the last third at most `RSS_GROWTH` times the middle third's
  plus `RSS_SLACK_MIB`;
- nothing is left behind: once the clients stop, every platform's queue, waiting
  sessions, flights, flight waiters and pending buffer writes are 0 on `/metrics`;
- the buffer is intact after the kill: answers kept before it are served from the buffer
  after it, the same as before; after a clean stop, `besluitbron cache stats` counts what
  `/metrics` counted;
- the simulator speaks for the server (single mode): the server records its platform
  calls; `besluitbron-sim replay TRACE --fidelity-ms FIDELITY_TOLERANCE_MS --timeout-ms
  ATTEMPT_TIMEOUT_MS` replays them with the recorded latencies and answers (and the
  server's retries), and per limited upstream service the admissions must match the
  server's in order and time, on at least `FIDELITY_MIN_ADMISSIONS` admissions each, and
  over the whole recording: across the SIGKILL (the server writes an open line for each
  attempt that goes while its request waits, so what the killed process admitted is in the
  recording) and up to the clean stop. A service whose comparison stopped early (the
  replay's line says "not compared from …", and why) fails the run, as does a divergence,
  which prints both timelines.

Prints one line per phase and a summary (requests, outcomes and refusals by kind, per
platform: client calls by outcome and the fake's requests and faults; RSS levels), and
`SOAK PASSED` or `SOAK FAILED`. Builds nothing: the binaries come from `BESLUITBRON_BIN`
and `BESLUITBRON_SIM_BIN` (`scripts/soak` builds them).

Environment: `SOAK_MODE` (`single` or `replicas`), `SOAK_SECS` (run length, at least 60;
the events — kills, restarts, Redis paused — add their own seconds),
`SOAK_CLIENTS` (concurrent clients, default 16), `SOAK_SEED` (workload seed, default 11),
`SOAK_KEEP` (keep the temporary directory with the logs), `SOAK_RECORD` (a file: the
single mode records its platform calls for the simulator — always, for the fidelity
check — and copies the trace there too).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedule import PLATFORMS, PROBE_TICK_S, ProbeState, phase_ends_at, phase_lengths, phases, to_probe  # noqa: E402

# ---------------------------------------------------------------------------------------
# Settings.

MODE = os.environ.get("SOAK_MODE", "single")
SOAK_SECS = max(60.0, float(os.environ.get("SOAK_SECS", "150")))
CLIENTS = max(4, int(os.environ.get("SOAK_CLIENTS", "16")))
SEED = int(os.environ.get("SOAK_SEED", "11"))
RECORD_TO = os.environ.get("SOAK_RECORD", "")
REPLICAS = 3 if MODE == "replicas" else 1

# The server is configured with short time-outs so that a stall is felt within the run:
# a platform attempt gives up after ATTEMPT_TIMEOUT_MS, a tool call after REQUEST_TIMEOUT_S.
ATTEMPT_TIMEOUT_MS = 4000
REQUEST_TIMEOUT_S = 30
# Every request of a client is bounded by this; past it the request hung (a failure).
REQUEST_BOUND_S = REQUEST_TIMEOUT_S + 20
START_TIMEOUT_S = 30.0
IDLE_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
RSS_GROWTH = 1.25
RSS_SLACK_MIB = 16.0
# A cluster's lease: short, so an owner's death is felt within a phase.
LEASE_TTL_MS = 2000
CLUSTER_SECRET = "besluitbron-soak-cluster-secret"
REDIS_PAUSE_S = 3.0

PROTOCOL_LEGACY = "2025-06-18"
PROTOCOL_MODERN = "2026-07-28"

# Every platform the soak drives is in schedule.PLATFORMS, with the name its tool errors
# must carry. The fakes may serve no platform that is not there (the soak fails: a
# platform without traffic).
PANIC = re.compile(r"panicked at|\bpanic\b", re.IGNORECASE)

WORDS = {
    "obv": ["fietspad", "begroting", "woningbouw", "haven", "klimaat", "jeugdzorg", "parkeren", "energie",
            "begroting woningbouw", "fietspad parkeren", "klimaat energie"],
    "tk": ["stikstof", "klimaat", "asiel", "onderwijs", "zorg", "woningbouw"],
    "opentk": ["stikstof", "klimaat", "kamer", "motie", "onderwijs", "zorg"],
    "ob": ["omgevingsvisie", "begroting", "verordening", "subsidie", "parkeren", "benoeming",
           "omgevingsvisie gemeente", "subsidie verordening"],
    "bwb": ["wet", "consumentenvuurwerk", "besluit", "regeling", "omgevingswet"],
    "ori": ["woningbouw", "begroting", "raad", "motie", "fietspad"],
    "cvdr": ["parkeren", "verordening", "afvalstoffen", "mantelzorg", "parkeervergunning"],
    "eurlex": ["interoperabiliteit", "verordening", "richtlijn", "gegevens", "europa"],
    "search": ["stikstof", "begroting", "klimaat", "woningbouw"],
}
RS_BUSY_DAY = "2026-11-03"


# The phases (schedule.py): each first switches every fault off, then sets its own; at
# any run length each lasts at least schedule.MIN_PHASE_S, counted from the end of its
# event (a kill and restart, a Redis restart or pause).
PHASES = phases(MODE)
LENGTHS = phase_lengths([p.fraction for p in PHASES], SOAK_SECS)
ALL_OFF = [
    f"{p}:{setting}"
    for p in PLATFORMS
    for setting in ("latency-ms=0", "stall-ms=0", "fail-every=0", "reset-every=0", "garbage=false",
                    "rate-limit-storm=false")
] + ["ob:overload-every=0", "ob:empty-page-every=0", "opentk:busy=false", "ori:retired=off"]


# ---------------------------------------------------------------------------------------
# Bookkeeping.


class Failures:
    """Invariant violations, each printed once with its first examples."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[str]] = collections.defaultdict(list)

    def add(self, kind: str, detail: str) -> None:
        examples = self.by_kind[kind]
        if len(examples) < 5:
            print(f"FAIL {kind}: {detail}", flush=True)
        examples.append(detail)

    def __bool__(self) -> bool:
        return bool(self.by_kind)


@dataclass
class Stats:
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    per_phase: dict[str, collections.Counter] = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    # (platform, outcome) -> calls; platform "all" for the cross-platform search, "page".
    per_platform: dict[str, collections.Counter] = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    # phase -> platform -> calls (any outcome)
    calls_in_phase: dict[str, collections.Counter] = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    requests: int = 0
    longest_s: float = 0.0
    tool_errors: collections.Counter = field(default_factory=collections.Counter)  # by the start of their text

    def count(self, phase: str, platform: str, outcome: str, took_s: float) -> None:
        self.requests += 1
        self.outcomes[outcome] += 1
        self.per_phase[phase][outcome] += 1
        self.per_platform[platform][outcome] += 1
        self.calls_in_phase[phase][platform] += 1
        self.longest_s = max(self.longest_s, took_s)


class Server:
    """One server process slot (a replica): its port, data directory and processes."""

    def __init__(self, run: "Run", index: int) -> None:
        self.run = run
        self.index = index
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.data_dir = run.tmp / f"data-{index}"
        self.data_dir.mkdir()
        self.proc: asyncio.subprocess.Process | None = None
        self.generation = 0  # processes started in this slot
        self.logs: list[Path] = []
        self.rss: list[tuple[int, float, float, float]] = []  # (generation, time, RSS MiB, buffer memory MiB)
        self.killed_at: float | None = None
        self.restarted_at: float | None = None
        self.stopped_on_purpose = False

    @property
    def name(self) -> str:
        return "server" if REPLICAS == 1 else f"replica {self.index}"


class Run:
    """Shared state of one soak run."""

    def __init__(self, tmp: Path, server_bin: str, sim_bin: str) -> None:
        self.tmp = tmp
        self.server_bin = server_bin
        self.sim_bin = sim_bin
        self.failures = Failures()
        self.stats = Stats()
        self.phase = "warm-up"
        self.fakes: dict[str, str] = {}
        self.control = ""
        self.servers: list[Server] = []
        self.fakes_proc: asyncio.subprocess.Process | None = None
        self.redis: asyncio.subprocess.Process | None = None
        self.redis_socket = tmp / "redis.sock"
        # Windows in which a lost connection or a lost session is expected: (start, end).
        self.outages: list[list[float]] = []
        self.session_losses: list[float] = []  # when sessions may have been lost (kill, Redis restart)
        self.caused_429: collections.Counter = collections.Counter()  # phase -> 429s caused by BesluitBron
        self.storm_429 = 0
        self.stopping = False
        self.fake_requests_at_phase: list[tuple[str, dict[str, int]]] = []
        # Calls started in the current phase per platform (the prober reads it), and
        # whether the clients are to stop (the last phase is over).
        self.started_in_phase: collections.Counter = collections.Counter()
        self.phases_over = False
        self.canonical_before_kills: collections.Counter = collections.Counter()

    def in_outage(self, started: float, ended: float) -> bool:
        """Whether a request running from `started` to `ended` overlapped a planned outage."""
        return any(started <= (end if end is not None else float("inf")) and ended >= begin for begin, end in self.outages)

    def begin_outage(self) -> list[float]:
        window: list[Any] = [time.monotonic(), None]
        self.outages.append(window)
        return window


# ---------------------------------------------------------------------------------------
# Processes.


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_fakes(run: Run) -> None:
    """Starts every fake and reads every platform it serves (one line each)."""
    log = run.tmp / "fakes.log"
    proc = await asyncio.create_subprocess_exec(
        run.sim_bin, "fakes", "--listen", "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=log.open("wb"),
    )
    run.fakes_proc = proc
    with anyio.fail_after(START_TIMEOUT_S):
        # One line per platform the fakes serve, then `ready`.
        line = (await proc.stdout.readline()).decode().strip()  # type: ignore[union-attr]
        while line and line != "ready":
            platform, _, url = line.partition(" ")
            run.fakes[platform] = url
            line = (await proc.stdout.readline()).decode().strip()  # type: ignore[union-attr]
    if not run.fakes:
        raise RuntimeError(f"the fakes exited before printing their URLs; see {log}")
    undriven = sorted(set(run.fakes) - set(PLATFORMS))
    if undriven:
        run.failures.add("platform without traffic", f"the fakes serve {undriven}, which the soak does not drive")
    missing = sorted(set(PLATFORMS) - set(run.fakes))
    if missing:
        raise RuntimeError(f"the fakes do not serve {missing}")
    origin = re.match(r"http://[^/]+", run.fakes["obv"]).group(0)  # type: ignore[union-attr]
    run.control = f"{origin}/_control"


async def start_redis(run: Run) -> None:
    redis_bin = shutil.which("redis-server")
    if not redis_bin:
        raise RuntimeError("redis-server is missing (scripts/redis-deps installs it)")
    run.redis_socket.unlink(missing_ok=True)
    run.redis = await asyncio.create_subprocess_exec(
        redis_bin, "--port", "0", "--unixsocket", str(run.redis_socket), "--unixsocketperm", "700",
        "--save", "", "--appendonly", "no", "--dir", str(run.tmp),
        stdin=asyncio.subprocess.DEVNULL, stdout=(run.tmp / "redis.log").open("ab"), stderr=asyncio.subprocess.STDOUT,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if run.redis_socket.exists():
            try:
                reader, writer = await asyncio.open_unix_connection(str(run.redis_socket))
                writer.write(b"PING\r\n")
                await writer.drain()
                pong = await asyncio.wait_for(reader.readline(), 2.0)
                writer.close()
                if pong.startswith(b"+PONG"):
                    return
            except (OSError, asyncio.TimeoutError):
                pass
        if time.monotonic() > deadline:
            raise RuntimeError("redis-server did not answer PING")
        await asyncio.sleep(0.05)


def write_config(run: Run, server: Server) -> Path:
    path = run.tmp / f"soak-{server.index}.toml"
    text = (
        "[BesluitBron]\n"
        # The clients come through a "proxy" on loopback, each with its own address.
        'TrustedProxies = ["127.0.0.1"]\n'
        f"RequestTimeoutSecs = {REQUEST_TIMEOUT_S}\n"
        # BesluitBron's own load-status refresh (the system session) runs during the soak.
        "StatusRefreshSecs = 20\n"
    )
    for platform in PLATFORMS:
        text += f"[BesluitBron.Platforms.{platform}]\nTimeoutMs = {ATTEMPT_TIMEOUT_MS}\n"
        if platform == "ori":
            # A mirror found answering as retired is held so for seconds, not a minute, so
            # that it gets traffic again within the phase.
            # (schedule.HOLD_MAX_S bounds it).
            text += "RetiredHoldSecs = 2\n"
    if REPLICAS == 1:
        # Recorded for the fidelity check (fidelity()); one salt, so both processes'
        # hashes of a request are equal.
        text += "[BesluitBron.Recording]\nEnabled = true\nSalt = \"soak\"\n"
    if REPLICAS > 1:
        text += (
            "[BesluitBron.Cluster]\n"
            f'Redis = "unix://{run.redis_socket}"\n'
            'InternalListen = "127.0.0.1:0"\n'
            f'Secret = "{CLUSTER_SECRET}"\n'
            f"LeaseTtlMs = {LEASE_TTL_MS}\n"
        )
    path.write_text(text)
    return path


async def start_server(run: Run, server: Server, http: httpx2.AsyncClient) -> None:
    server.generation += 1
    log = run.tmp / f"server-{server.index}-{server.generation}.log"
    server.logs.append(log)
    # Every platform the fakes serve, so none is asked at its real address.
    urls = [arg for p, url in run.fakes.items() for arg in ("--platform-url", f"{p}={url}")]
    server.proc = await asyncio.create_subprocess_exec(
        run.server_bin, "serve", "--config", str(write_config(run, server)),
        "--listen", f"127.0.0.1:{server.port}", "--data-dir", str(server.data_dir), *urls,
        stdin=asyncio.subprocess.DEVNULL, stdout=log.open("wb"), stderr=asyncio.subprocess.STDOUT,
    )
    asyncio.create_task(watch_exit(run, server, server.proc, server.generation))
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if server.proc.returncode is not None:
            raise RuntimeError(f"{server.name} exited with {server.proc.returncode} at start; see {log}")
        try:
            if (await http.get(f"{server.base}/healthz", timeout=2.0)).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.name}: /healthz not 200 within {START_TIMEOUT_S:.0f} s; see {log}")
        await asyncio.sleep(0.05)


async def watch_exit(run: Run, server: Server, proc: asyncio.subprocess.Process, generation: int) -> None:
    """Records a server process that ends other than by the soak's own kill or stop."""
    code = await proc.wait()
    planned = generation < server.generation or run.stopping or server.stopped_on_purpose
    if not planned:
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        run.failures.add("server died", f"{server.name} process {generation} (pid {proc.pid}) ended by {how} in phase {run.phase!r}")


async def stop_process(proc: asyncio.subprocess.Process | None, sig: int = signal.SIGTERM) -> int | None:
    """Sends `sig`, then SIGKILL after `STOP_TIMEOUT_S`; the exit code (never raises)."""
    if proc is None:
        return None
    if proc.returncode is not None:
        return proc.returncode
    try:
        proc.send_signal(sig)
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
    except (ProcessLookupError, asyncio.TimeoutError):
        pass
    return proc.returncode


def canonical_counts(m: dict[tuple[str, str], float]) -> collections.Counter:
    """Requests answered through the platform's own equivalence only (R-D5 level 1), per
    platform: each would have been a platform call of its own without it."""
    out: collections.Counter = collections.Counter()
    for (name, labels), v in m.items():
        if name == "besluitbron_requests_total" and 'kind="canonical"' in labels:
            out[re.search(r'platform="([^"]+)"', labels).group(1)] += int(v)  # type: ignore[union-attr]
    return out


async def kill_and_restart(run: Run, server: Server, http: httpx2.AsyncClient, start: float) -> None:
    """SIGKILL, then the same slot started again on the same data directory and port."""
    try:
        run.canonical_before_kills += canonical_counts(await metrics(server, http))
    except (httpx2.HTTPError, ValueError):
        run.failures.add("metrics", f"{server.name}: /metrics unreadable before the kill")
    window = run.begin_outage()
    run.session_losses.append(time.monotonic())
    server.stopped_on_purpose = True
    await stop_process(server.proc, signal.SIGKILL)
    server.stopped_on_purpose = False
    print(f"[{time.monotonic() - start:6.1f} s] {server.name} killed (SIGKILL)", flush=True)
    await start_server(run, server, http)
    window[1] = time.monotonic()
    print(f"[{time.monotonic() - start:6.1f} s] {server.name} started again on the same data directory", flush=True)


def vm_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


async def sample_rss(run: Run, http: httpx2.AsyncClient) -> None:
    """Each server's RSS with what its buffers' memory layers hold, every second."""
    while not run.stopping:
        for server in run.servers:
            proc = server.proc
            if proc is None or proc.returncode is not None:
                continue
            try:
                m = await metrics(server, http)
            except (httpx2.HTTPError, ValueError):
                continue
            mib = vm_rss_mib(proc.pid)
            if mib is not None and proc.returncode is None:
                buffered = sum(v for (name, _), v in m.items() if name == "besluitbron_buffer_memory_bytes") / 2**20
                server.rss.append((server.generation, time.monotonic(), mib, buffered))
        await asyncio.sleep(1.0)


# ---------------------------------------------------------------------------------------
# The fakes' control route and the server's metrics.


async def set_faults(run: Run, http: httpx2.AsyncClient, settings: list[str]) -> dict[str, Any]:
    known = [s for s in ALL_OFF + settings if s.split(":", 1)[0] in run.fakes]
    response = await http.post(f"{run.control}/faults", content=" ".join(known), timeout=5.0)
    if response.status_code != 200:
        raise RuntimeError(f"the fakes refused {settings}: {response.status_code} {response.text[:200]}")
    return response.json()


async def fakes_state(run: Run, http: httpx2.AsyncClient) -> dict[str, Any]:
    response = await http.get(f"{run.control}/state", timeout=5.0)
    response.raise_for_status()
    return response.json()


def caused_429s(state: dict[str, Any]) -> tuple[int, int]:
    """(429s the platforms' own limits sent, 429s storms sent), over all fakes."""
    own = sum(f["rate_limited"] - f["storm_rate_limited"] for f in state.values())
    storm = sum(f["storm_rate_limited"] for f in state.values())
    return own, storm


async def watch_429s(run: Run, http: httpx2.AsyncClient) -> None:
    """Attributes every platform 429 not sent by a storm to the phase it was seen in."""
    seen = 0
    while not run.stopping:
        try:
            own, run.storm_429 = caused_429s(await fakes_state(run, http))
        except (httpx2.HTTPError, ValueError):
            await asyncio.sleep(0.5)
            continue
        if own > seen:
            run.caused_429[run.phase] += own - seen
            run.failures.add("platform 429 caused by BesluitBron", f"{own - seen} more during phase {run.phase!r}")
            seen = own
        await asyncio.sleep(0.5)


METRIC_LINE = re.compile(r'^(besluitbron_[a-z_]+)\{([^}]*)\} (\S+)$')


async def metrics(server: Server, http: httpx2.AsyncClient) -> dict[tuple[str, str], float]:
    """`/metrics` as {(name, labels): value} for the labelled series."""
    text = (await http.get(f"{server.base}/metrics", timeout=5.0)).text
    out = {}
    for line in text.splitlines():
        m = METRIC_LINE.match(line)
        if m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


LEFT_BEHIND = (
    "besluitbron_platform_queue_length",
    "besluitbron_platform_waiting_sessions",
    "besluitbron_platform_in_flight",
    "besluitbron_platform_flight_waiters",
    "besluitbron_buffer_pending_writes",
)


def left_behind(m: dict[tuple[str, str], float]) -> dict[str, float]:
    return {f"{name}{{{labels}}}": v for (name, labels), v in m.items() if name in LEFT_BEHIND and v != 0}


async def wait_idle(run: Run, server: Server, http: httpx2.AsyncClient, what: str) -> dict[tuple[str, str], float]:
    """Polls `/metrics` until nothing is left behind (bounded); the last scrape."""
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    while True:
        m = await metrics(server, http)
        missing = [name for name in LEFT_BEHIND if not any(k[0] == name for k in m)]
        if missing:
            run.failures.add("metrics", f"{server.name}, {what}: /metrics lacks {missing}")
            return m
        rest = left_behind(m)
        if not rest:
            return m
        if time.monotonic() > deadline:
            run.failures.add("left behind", f"{server.name}, {what}: still {rest} after {IDLE_TIMEOUT_S:.0f} s idle")
            return m
        await asyncio.sleep(0.2)


async def owner_of(run: Run, http: httpx2.AsyncClient, platform: str) -> Server | None:
    """The replica whose `/metrics` says it owns `platform`'s lease now."""
    for server in run.servers:
        try:
            m = await metrics(server, http)
        except (httpx2.HTTPError, ValueError):
            continue
        if m.get(("besluitbron_platform_owned", f'platform="{platform}"')) == 1.0:
            return server
    return None


async def wait_owner(run: Run, http: httpx2.AsyncClient, platform: str) -> Server:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        owner = await owner_of(run, http, platform)
        if owner is not None:
            return owner
        if time.monotonic() > deadline:
            raise RuntimeError(f"no replica owns {platform} within {START_TIMEOUT_S:.0f} s")
        await asyncio.sleep(0.1)


# ---------------------------------------------------------------------------------------
# One MCP exchange.


@dataclass
class Reply:
    status: int
    headers: httpx2.Headers
    message: dict[str, Any] | None
    text: str


def parse_reply(response: httpx2.Response) -> Reply:
    text = response.text
    message = None
    if "text/event-stream" in response.headers.get("content-type", ""):
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    m = json.loads(line[5:].strip())
                except ValueError:
                    continue
                if isinstance(m, dict) and "id" in m and ("result" in m or "error" in m):
                    message = m
    else:
        try:
            m = json.loads(text) if text else None
            message = m if isinstance(m, dict) else None
        except ValueError:
            message = None
    return Reply(response.status_code, response.headers, message, text)


class Session:
    """One client session: its address, its era, its endpoint, its replica, and (legacy)
    its session id."""

    def __init__(self, run: Run, http: httpx2.AsyncClient, address: str, era: str, path: str, server: Server,
                 rng: random.Random | None = None) -> None:
        self.run = run
        self.rng = rng  # None: every request goes to `server`
        self.http = http
        self.address = address
        self.era = era
        self.path = path
        self.server = server
        self.session_id: str | None = None
        self.opened_at = 0.0
        self.next_id = 1

    def headers(self, method: str, name: str | None) -> dict[str, str]:
        h = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "x-forwarded-for": self.address,
            "mcp-protocol-version": self.era,
        }
        if self.era == PROTOCOL_MODERN:
            h["mcp-method"] = method
            if name:
                h["mcp-name"] = name
        if self.session_id:
            h["mcp-session-id"] = self.session_id
        return h

    def body(self, method: str, params: dict[str, Any] | None, with_id: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        if with_id:
            body["id"] = self.next_id
            self.next_id += 1
            if self.era == PROTOCOL_MODERN:
                meta = body.setdefault("params", {}).setdefault("_meta", {})
                meta["io.modelcontextprotocol/protocolVersion"] = PROTOCOL_MODERN
                meta["io.modelcontextprotocol/clientCapabilities"] = {}
        return body

    def target(self) -> Server:
        """A legacy session stays on its replica (the load balancer hashes on the session);
        a stateless request may go to any."""
        if self.era == PROTOCOL_MODERN and self.rng is not None and len(self.run.servers) > 1:
            return self.rng.choice(self.run.servers)
        return self.server

    async def post(self, body: dict[str, Any], name: str | None = None) -> Reply:
        response = await self.http.post(
            f"{self.target().base}{self.path}", content=json.dumps(body),
            headers=self.headers(body["method"], name), timeout=REQUEST_BOUND_S,
        )
        return parse_reply(response)

    async def initialize(self) -> Reply:
        """The legacy handshake; the session id is kept when it succeeds."""
        self.session_id = None
        reply = await self.post(self.body("initialize", {
            "protocolVersion": PROTOCOL_LEGACY, "capabilities": {},
            "clientInfo": {"name": "besluitbron-soak", "version": "1"}}))
        sid = reply.headers.get("mcp-session-id")
        if reply.status == 200 and sid:
            self.session_id = sid
            self.opened_at = time.monotonic()
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def close(self) -> None:
        if self.session_id:
            try:
                await self.http.delete(f"{self.server.base}{self.path}", headers=self.headers("", None), timeout=10)
            except httpx2.HTTPError:
                pass
            self.session_id = None

    async def cancel(self, request_id: int) -> None:
        """Tells the server the client gave up on `request_id` (legacy: a notification)."""
        if self.era == PROTOCOL_LEGACY and self.session_id:
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": "the user moved on"}}
            try:
                await self.post(note)
            except httpx2.HTTPError:
                pass

    def lost_to_a_restart(self) -> bool:
        """Whether a kill or a Redis restart since this session opened may have ended it."""
        return bool(self.session_id) and any(t > self.opened_at for t in self.run.session_losses)


def text_of(message: dict[str, Any]) -> str:
    content = (message.get("result") or {}).get("content") or []
    return " ".join(c.get("text", "") for c in content if isinstance(c, dict))


def platform_of(tool: str) -> str:
    """The platform a tool (or `resource:URI`, `page`) belongs to; `all` for `search`."""
    if tool.startswith("resource:besluitbron://"):
        return tool.split("/")[2]
    prefix = tool.split("_", 1)[0]
    return prefix if prefix in PLATFORMS else "all"


def classify(run: Run, session: Session, tool: str, reply: Reply) -> tuple[str, dict[str, Any] | None]:
    """The outcome of one tools/call or resources/read; records a failure when it is not a
    clear answer or refusal."""
    platform = platform_of(tool)
    m = reply.message
    if reply.status == 200 and m is not None and "result" in m:
        result = m["result"]
        if tool.startswith("resource:"):
            contents = result.get("contents")
            if not isinstance(contents, list) or not contents:
                run.failures.add("resource without contents", f"{tool}: {reply.text[:200]!r}")
                return "malformed", None
            return "ok resource", None
        text = text_of(m)
        if result.get("isError"):
            names = [PLATFORMS[platform]] if platform in PLATFORMS else list(PLATFORMS.values())
            if not any(name in text for name in names):
                run.failures.add("unclear tool error", f"{tool}: names none of {names}: {text[:200]!r}")
            if any(url.split("/")[2] in text for url in run.fakes.values()):
                run.failures.add("tool error echoes an internal URL", f"{tool}: {text[:200]!r}")
            if len(text) > 2000:
                run.failures.add("tool error too long", f"{tool}: {len(text)} characters")
            run.stats.tool_errors[re.sub(r"\d+", "#", text)[:90]] += 1
            return "tool error", None
        if not isinstance(result.get("structuredContent"), dict):
            run.failures.add("answer without structure", f"{tool}: {reply.text[:200]!r}")
            return "malformed", None
        if "older copy from BesluitBron's buffer" in text:
            return "ok stale", result["structuredContent"]
        if "from BesluitBron's buffer" in text:
            return "ok buffer", result["structuredContent"]
        if "shared with an identical request" in text:
            return "ok coalesced", result["structuredContent"]
        return "ok fresh", result["structuredContent"]
    if reply.status == 404 and session.lost_to_a_restart():
        return "HTTP 404 (session ended by a restart)", None
    if m is not None and "error" in m and isinstance(m["error"], dict) and m["error"].get("message"):
        if reply.status >= 500 and reply.status != 503:
            run.failures.add("HTTP 5xx", f"{tool}: {reply.status} {reply.text[:200]!r}")
        return f"JSON-RPC error {m['error'].get('code')} (HTTP {reply.status})", None
    if reply.status in (429, 503):
        if not reply.headers.get("retry-after"):
            run.failures.add("refusal without Retry-After", f"{tool}: HTTP {reply.status} {reply.text[:200]!r}")
        return f"HTTP {reply.status}", None
    run.failures.add("unclear answer", f"{tool}: HTTP {reply.status} {reply.text[:200]!r}")
    return f"HTTP {reply.status} unclear", None


# ---------------------------------------------------------------------------------------
# The clients.

# Reference lists and fixed records, per platform: what assistants look up besides searching.
REFERENCE: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "obv": [("obv_sources", {}), ("obv_sources", {"organization_type": "province"}), ("obv_status", {})],
    "tk": [("tk_factions", {}), ("tk_committees", {}), ("tk_votes", {"id": "2025Z17647"})],
    "rechtspraak": [("rechtspraak_courts", {"filter": "Gerechtshof"}), ("rechtspraak_areas", {}),
                    ("rechtspraak_procedures", {})],
    "opentk": [("opentk_status", {}), ("opentk_activity", {"id": "2026A00007"})],
    "ob": [("ob_search", {"query": "omgevingsvisie", "limit": 5})],
    "bwb": [("bwb_read", {"id": "BWBR0047001", "article": "2"}), ("bwb_read", {"id": "BWBR0047001", "date": "2025-08-01"})],
    "ori": [("ori_sources", {})],
    "cvdr": [("cvdr_read", {"id": "CVDR700001"}), ("cvdr_read", {"id": "CVDR700001", "date": "2025-06-01"}),
             ("cvdr_search", {"query": "parkeren", "organization": "Gemeente Utrecht"})],
    "eurlex": [("eurlex_read", {"id": "32024R0903", "article": "1"}), ("eurlex_read", {"id": "32008R1137"})],
}
# Resources a session on the platform's endpoint can read without a search first.
RESOURCES: dict[str, list[str]] = {
    "obv": ["besluitbron://obv/sources"],
    "tk": ["besluitbron://tk/factions", "besluitbron://tk/committees"],
    "rechtspraak": ["besluitbron://rechtspraak/courts", "besluitbron://rechtspraak/areas"],
    "ori": ["besluitbron://ori/sources"],
}
# The template of the resource that reads a result, by the tool that reads it.
READ_RESOURCE = {
    "obv_document": "besluitbron://obv/document/{id}",
    "tk_document": "besluitbron://tk/document/{id}",
    "rechtspraak_ruling": "besluitbron://rechtspraak/ruling/{id}",
    "ob_document": "besluitbron://ob/publication/{id}",
    "opentk_document": "besluitbron://opentk/document/{id}",
}


def search_call(r: random.Random, platform: str) -> tuple[str, dict[str, Any]]:
    words = WORDS.get(platform, [])
    if platform == "obv":
        args: dict[str, Any] = {"query": r.choice(words), "limit": r.choice([5, 10, 24])}
        if r.random() < 0.3:
            args["sort"] = r.choice(["date_desc", "relevance"])
        return "obv_search", args
    if platform == "tk":
        args = {"query": r.choice(words)}
        if r.random() < 0.3:
            args.update({"kind": "cases", "soort": "Motie"})
        return "tk_search", args
    if platform == "rechtspraak":
        return "rechtspraak_search", r.choice([
            {"court": "HR"}, {}, {"date_from": RS_BUSY_DAY, "date_to": RS_BUSY_DAY},
            {"court": "HR", "date_from": "2026-01-01", "date_to": "2026-12-31"},
        ])
    return f"{platform}_search", {"query": r.choice(words)}


def written_otherwise(r: random.Random, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The same search as another assistant would write it: its words in another order, in
    other case, with more spaces — what the platform answers identically (its AND of words,
    case folded: R-D5 level 1), so BesluitBron asks it once. Only where that holds: not an
    OpenBesluitvorming search by relevance, an Officiële Bekendmakingen search always (its
    order is fixed to newest first)."""
    query = args.get("query")
    if not isinstance(query, str) or (tool == "obv_search" and args.get("sort") == "relevance"):
        return args
    words = query.split()
    r.shuffle(words)
    words = [w.capitalize() if r.random() < 0.5 else w.upper() if r.random() < 0.2 else w for w in words]
    return {**args, "query": (" " * r.randint(1, 2)).join(words) + (" " if r.random() < 0.3 else "")}


def fresh_call(r: random.Random, platform: str) -> tuple[str, dict[str, Any]]:
    """A call the buffer is unlikely to hold: an odd page, an odd date."""
    words = WORDS.get(platform, [])
    if platform == "obv":
        return "obv_search", {"query": r.choice(words), "limit": 5, "offset": r.randint(1, 300)}
    if platform == "tk":
        year = r.randint(2000, 2025)
        return "tk_search", {"query": r.choice(words), "date_from": f"{year}-01-01", "date_to": f"{year}-12-31"}
    if platform == "rechtspraak":
        return "rechtspraak_search", {"offset": 10 * r.randint(1, 200)}
    if platform == "bwb":
        return "bwb_search", {"query": r.choice(words), "date": f"{r.randint(2000, 2025)}-0{r.randint(1, 9)}-01"}
    if platform == "opentk":
        return "opentk_search", {"query": f"{r.choice(words)} {r.choice(words)}"}
    if platform == "cvdr":
        return "cvdr_search", {"query": r.choice(words), "date": f"{r.randint(2000, 2025)}-0{r.randint(1, 9)}-01"}
    return f"{platform}_search", {"query": r.choice(words), "offset": r.randint(1, 30)}


class Prober:
    """Makes sure every platform gets traffic in every phase whatever the clients draw
    (`schedule.to_probe` decides, every `PROBE_TICK_S`): each platform no call has started
    for in the phase is asked at once, one its fake has not counted a request of in the
    phase is asked again, and each is asked now and then besides. Each call asks something
    new (an odd page, an odd date: never in the buffer), on a stateless session of its own,
    and is counted like the clients' calls."""

    def __init__(self, run: Run, http: httpx2.AsyncClient) -> None:
        self.run = run
        self.http = http
        self.rng = random.Random(SEED * 1000 + 999)
        self.n = 0
        self.client = Client(run, http, 999)
        self.client.address = "198.51.100.240"
        self.client.era = PROTOCOL_MODERN
        self.states = {p: ProbeState() for p in PLATFORMS}
        self.phase = ""

    def call(self, platform: str) -> tuple[str, dict[str, Any]]:
        self.n += 1
        n, words = self.n, WORDS.get(platform, [""])
        word = words[n % len(words)]
        if platform == "obv":
            return "obv_search", {"query": word, "limit": 5, "offset": 300 + n}
        if platform == "tk":
            return "tk_search", {"query": word, "date_from": f"{1900 + n % 120}-01-01", "date_to": f"{1900 + n % 120}-12-31",
                                 "offset": n // 120}
        if platform == "rechtspraak":
            return "rechtspraak_search", {"offset": 10 * (n % 230), "sort": "oldest" if (n // 230) % 2 else "newest"}
        if platform == "bwb":
            return "bwb_search", {"query": word, "date": f"{1950 + n % 70}-{1 + n % 12:02d}-{1 + n % 28:02d}"}
        if platform == "opentk":
            return "opentk_search", {"query": f"{word} {n}"}
        if platform == "cvdr":
            return "cvdr_search", {"query": word, "date": f"{1990 + n % 35}-{1 + n % 12:02d}-{1 + n % 28:02d}"}
        return f"{platform}_search", {"query": word, "offset": 40 + n}

    async def probe(self, platform: str, phase: str) -> None:
        session = Session(self.run, self.http, self.client.address, PROTOCOL_MODERN, f"/mcp/{platform}",
                          self.run.servers[self.n % len(self.run.servers)], self.rng)
        tool, args = self.call(platform)
        state = self.states[platform]
        try:
            await self.client.exchange(session, tool, args, None)
        finally:
            state.out -= 1
            if self.phase == phase:
                state.out_in_phase -= 1

    async def work(self) -> None:
        run, out = self.run, set()
        while not run.phases_over and not run.stopping:
            if run.phase != self.phase:
                self.phase = run.phase
                for state in self.states.values():
                    state.reached_in_phase, state.out_in_phase = False, 0
            try:
                now_requests = requests_of(await fakes_state(run, self.http))
            except (httpx2.HTTPError, ValueError):
                now_requests = {}
            since = run.fake_requests_at_phase[-1][1] if run.fake_requests_at_phase else {}
            for platform, state in self.states.items():
                state.started_in_phase = run.started_in_phase[platform]
                state.reached_in_phase |= now_requests.get(platform, 0) > since.get(platform, 0)
            now = time.monotonic()
            for platform in to_probe(now, self.states):
                state = self.states[platform]
                state.last_probe_at, state.out, state.out_in_phase = now, state.out + 1, state.out_in_phase + 1
                task = asyncio.create_task(self.probe(platform, self.phase))
                out.add(task)
                task.add_done_callback(out.discard)
            await asyncio.sleep(PROBE_TICK_S)
        await asyncio.gather(*out)


class Client:
    """One simulated assistant (or, for a few, a person on the search page): sessions one
    after another, each a few calls."""

    def __init__(self, run: Run, http: httpx2.AsyncClient, index: int) -> None:
        self.run = run
        self.http = http
        self.index = index
        self.rng = random.Random(SEED * 1000 + index)
        self.address = f"198.51.100.{index + 1}"
        self.era = PROTOCOL_LEGACY if index % 2 == 0 else PROTOCOL_MODERN
        self.page_user = index % 8 == 7
        self.reads: dict[str, list[tuple[str, dict[str, Any]]]] = collections.defaultdict(list)
        self.pages: dict[str, list[tuple[str, dict[str, Any]]]] = collections.defaultdict(list)
        self.last: tuple[str, dict[str, Any]] | None = None

    def home(self) -> Server:
        return self.run.servers[self.index % len(self.run.servers)]

    def pick_path(self) -> str:
        # Each platform's endpoint in turn, and now and then the whole list.
        platforms = list(PLATFORMS)
        if self.rng.random() < 0.2:
            return "/mcp"
        return f"/mcp/{platforms[(self.index + self.rng.randrange(len(platforms))) % len(platforms)]}"

    def pick_platform(self, path: str) -> str:
        return path.rsplit("/", 1)[1] if path != "/mcp" else self.rng.choice(list(PLATFORMS))

    def pick_call(self, path: str) -> tuple[str, dict[str, Any]]:
        r = self.rng
        platform = self.pick_platform(path)
        if self.last and r.random() < 0.12 and platform_of(self.last[0]) in (platform, "all"):
            if path == "/mcp" or platform_of(self.last[0]) == platform:
                return self.last
        if path == "/mcp" and r.random() < 0.25:
            return "search", {"query": r.choice(WORDS["search"]), "limit": r.choice([2, 5])}
        x = r.random()
        if x < 0.35:
            tool, args = search_call(r, platform)
            if tool in ("obv_search", "ob_search") and r.random() < 0.4:
                args = written_otherwise(r, tool, args)
            return tool, args
        if x < 0.6 and self.reads[platform]:
            return r.choice(self.reads[platform])
        if x < 0.7 and self.pages[platform]:
            return r.choice(self.pages[platform])
        if x < 0.8:
            uris = list(RESOURCES.get(platform, []))
            uris += [READ_RESOURCE[t].format(id=a["id"]) for t, a in self.reads[platform] if t in READ_RESOURCE]
            if uris:
                return f"resource:{r.choice(uris)}", {}
        return r.choice(REFERENCE[platform])

    def learn(self, tool: str, args: dict[str, Any], structured: dict[str, Any]) -> None:
        """What a result names is read next: each result's `tool` with its `id`, and the
        next page at `next_offset`."""
        # `search` answers one list over the platforms; every other tool its own.
        groups = [structured]
        for group in groups or []:
            if not isinstance(group, dict):
                continue
            for item in group.get("results") or []:
                if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item.get("tool"):
                    continue
                platform = platform_of(item["tool"])
                if platform in PLATFORMS and len(self.reads[platform]) < 30:
                    self.reads[platform].append((item["tool"], {"id": item["id"]}))
                    if item["tool"] == "tk_document" and self.rng.random() < 0.3:
                        self.reads[platform].append(("tk_document_text", {"id": item["id"], "length": 4000}))
                    if item["tool"].endswith(("_document", "_ruling")) and self.rng.random() < 0.2:
                        self.reads[platform].append((item["tool"], {"id": item["id"], "offset": 2000, "length": 2000}))
        offset = structured.get("next_offset")
        platform = platform_of(tool)
        if isinstance(offset, int) and platform in PLATFORMS and len(self.pages[platform]) < 10:
            self.pages[platform].append((tool, {**args, "offset": offset}))

    async def exchange(self, session: Session, tool: str, args: dict[str, Any], cancel_after: float | None) -> None:
        """One tools/call (or resources/read), bounded; classified and counted."""
        run = self.run
        if tool.startswith("resource:"):
            uri = tool.split(":", 1)[1]
            body, name = session.body("resources/read", {"uri": uri}), uri
        else:
            body, name = session.body("tools/call", {"name": tool, "arguments": args}), tool
        phase, started = run.phase, time.monotonic()
        run.started_in_phase[platform_of(tool)] += 1
        outcome = None
        try:
            if cancel_after is not None:
                with anyio.move_on_after(cancel_after) as scope:
                    reply = await session.post(body, name)
                if scope.cancelled_caught:
                    await session.cancel(body["id"])
                    run.stats.count(phase, platform_of(tool), "cancelled by the client", time.monotonic() - started)
                    return
            else:
                with anyio.fail_after(REQUEST_BOUND_S):
                    reply = await session.post(body, name)
            outcome, structured = classify(run, session, tool, reply)
            if structured is not None:
                self.learn(tool, args, structured)
                self.last = (tool, args)
            if outcome.startswith("HTTP 404 (session"):
                session.session_id = None  # the next call opens a new session
        except TimeoutError:
            outcome = "hung"
            run.failures.add("request hung", f"{tool} {args} gave no answer within {REQUEST_BOUND_S} s")
        except httpx2.TimeoutException:
            outcome = "hung"
            run.failures.add("request hung", f"{tool} {args}: HTTP time-out after {REQUEST_BOUND_S} s")
        except httpx2.TransportError as e:
            if run.in_outage(started, time.monotonic()):
                outcome = "connection lost to a kill"
                session.session_id = None
            else:
                outcome = "connection error"
                run.failures.add("connection error", f"{tool}: {type(e).__name__}: {e}")
        took = time.monotonic() - started
        run.stats.count(phase, platform_of(tool), outcome, took)

    async def page_visit(self) -> None:
        """A person on the search page: a search over every platform, or the status page."""
        run, r = self.run, self.rng
        server = r.choice(run.servers)
        if r.random() < 0.8:
            url, what = f"{server.base}/?q={r.choice(WORDS['search'])}", "page search"
        else:
            url, what = f"{server.base}/status", "status page"
        phase, started = run.phase, time.monotonic()
        try:
            with anyio.fail_after(REQUEST_BOUND_S):
                response = await self.http.get(url, headers={"x-forwarded-for": self.address}, timeout=REQUEST_BOUND_S)
            if response.status_code == 200 and "<html" in response.text[:400].lower():
                outcome = f"{what} 200"
            elif response.status_code in (429, 503) and response.headers.get("retry-after"):
                outcome = f"{what} {response.status_code}"
            else:
                outcome = f"{what} HTTP {response.status_code}"
                run.failures.add("page", f"{url}: HTTP {response.status_code} {response.text[:200]!r}")
        except (TimeoutError, httpx2.TimeoutException):
            outcome = "hung"
            run.failures.add("request hung", f"{url} gave no answer within {REQUEST_BOUND_S} s")
        except httpx2.TransportError as e:
            if run.in_outage(started, time.monotonic()):
                outcome = "connection lost to a kill"
            else:
                outcome = "connection error"
                run.failures.add("connection error", f"{url}: {type(e).__name__}: {e}")
        run.stats.count(phase, "page", outcome, time.monotonic() - started)

    async def work(self) -> None:
        run = self.run
        while not run.phases_over and not run.stopping:
            if self.page_user and self.rng.random() < 0.5:
                await self.page_visit()
                await self.pause_while_down()
                await asyncio.sleep(self.rng.uniform(0.2, 1.0))
                continue
            session = Session(run, self.http, self.address, self.era, self.pick_path(), self.home(), self.rng)
            if self.era == PROTOCOL_LEGACY:
                started = time.monotonic()
                try:
                    with anyio.fail_after(REQUEST_BOUND_S):
                        reply = await session.initialize()
                except (TimeoutError, httpx2.HTTPError) as e:
                    if not run.in_outage(started, time.monotonic()):
                        run.failures.add("initialize failed", f"{type(e).__name__}: {e}")
                    await self.pause_while_down()
                    continue
                if not session.session_id:
                    if reply.status not in (429, 503):
                        run.failures.add("initialize refused unclearly", f"HTTP {reply.status} {reply.text[:200]!r}")
                    run.stats.count(run.phase, "initialize", f"initialize HTTP {reply.status}", 0.0)
                    await asyncio.sleep(float(reply.headers.get("retry-after", "1")))
                    continue
            for _ in range(self.rng.randint(3, 12)):
                if run.phases_over or run.stopping:
                    break
                if self.era == PROTOCOL_LEGACY and not session.session_id:
                    break
                if self.rng.random() < 0.1:
                    # The user moves on: a new question (not in the buffer), some given up soon.
                    tool, args = fresh_call(self.rng, self.pick_platform(session.path))
                    cancel_after: float | None = self.rng.uniform(0.02, 0.4) if self.rng.random() < 0.4 else None
                else:
                    tool, args = self.pick_call(session.path)
                    cancel_after = None
                await self.exchange(session, tool, args, cancel_after)
                await self.pause_while_down()
                # Assistants think between calls.
                await asyncio.sleep(self.rng.uniform(0.05, 0.6))
            if self.rng.random() < 0.7:
                await session.close()

    async def pause_while_down(self) -> None:
        """While this client's replica is away (between a kill and its restart), wait for it."""
        while not self.run.stopping and any(end is None for _, end in self.run.outages):
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------------------------------
# The buffer across the kill.

MARKERS: list[tuple[str, str, dict[str, Any]]] = [
    ("/mcp/obv", "obv_sources", {}),
    ("/mcp/tk", "tk_factions", {}),
    ("/mcp/tk", "tk_committees", {}),
    ("/mcp/rechtspraak", "rechtspraak_courts", {}),
    ("/mcp/bwb", "bwb_read", {"id": "BWBR0047001", "article": "2"}),
    ("/mcp/cvdr", "cvdr_read", {"id": "CVDR700001_2"}),
]
# A search per platform whose first results are read as markers too.
MARKER_SEARCHES: list[tuple[str, str, dict[str, Any]]] = [
    ("/mcp/obv", "obv_search", {"query": "begroting", "limit": 5}),
    ("/mcp/tk", "tk_search", {"query": "stikstof"}),
    ("/mcp/rechtspraak", "rechtspraak_search", {"court": "HR"}),
    ("/mcp/opentk", "opentk_search", {"query": "stikstof"}),
    ("/mcp/ob", "ob_search", {"query": "omgevingsvisie", "limit": 5}),
]


async def markers_before(run: Run, http: httpx2.AsyncClient, server: Server) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """Fetches the markers (reference lists and a few records per platform) on `server`."""
    warm = Session(run, http, "198.51.100.250", PROTOCOL_MODERN, "/mcp/obv", server)
    calls = list(MARKERS)
    for path, tool, args in MARKER_SEARCHES:
        warm.path = path
        found = await call_ok(warm, tool, args)
        calls += [(path, h["tool"], {"id": h["id"]}) for h in found.get("results", [])[:2]]
    kept = []
    for path, tool, args in calls:
        warm.path = path
        kept.append((path, tool, args, await call_ok(warm, tool, args)))
    return kept


async def call_ok(session: Session, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    with anyio.fail_after(REQUEST_BOUND_S):
        reply = await session.post(session.body("tools/call", {"name": tool, "arguments": args}), tool)
    m = reply.message or {}
    result = m.get("result") or {}
    if reply.status != 200 or result.get("isError") or not isinstance(result.get("structuredContent"), dict):
        raise RuntimeError(f"warm-up {tool} {args}: HTTP {reply.status} {reply.text[:300]!r}")
    return result["structuredContent"]


async def markers_after(run: Run, http: httpx2.AsyncClient, server: Server, kept: list, summary: dict[str, Any]) -> None:
    """Asks every marker again after the kill, on the killed server: unchanged, and (one
    process) from its buffer. Across replicas a follower answers from its memory or
    forwards to the platform's owner, whose buffer counts: there the answer must be the
    same, wherever it came from."""
    check = Session(run, http, "198.51.100.251", PROTOCOL_MODERN, "/mcp/obv", server)
    served = 0
    for path, tool, args, before in kept:
        check.path = path
        with anyio.fail_after(REQUEST_BOUND_S):
            reply = await check.post(check.body("tools/call", {"name": tool, "arguments": args}), tool)
        m = reply.message or {}
        text = text_of(m) if m else ""
        after = (m.get("result") or {}).get("structuredContent")
        from_buffer = "from BesluitBron's buffer" in text and "older copy" not in text
        if REPLICAS > 1 and (m.get("result") or {}).get("isError"):
            continue  # the owner asked the platform, whose faults may be on again by now
        if REPLICAS == 1 and not from_buffer:
            run.failures.add("buffer lost in the kill", f"{tool} {args} was not served from the buffer: {text[:160]!r}")
        elif after != before:
            run.failures.add("buffer changed in the kill", f"{tool} {args}: the answer differs from before the kill: "
                                                            f"{text[:160]!r}")
        served += from_buffer
    summary["markers served from the buffer after the kill"] = f"{served} of {len(kept)}"


def cache_stats(run: Run, server: Server) -> dict[str, int]:
    """`besluitbron cache stats`: total entries per platform."""
    out = subprocess.run([run.server_bin, "cache", "stats", "--data-dir", str(server.data_dir)],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    totals = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "total":
            totals[parts[0]] = int(parts[2])
    return totals


def metric_entries(m: dict[tuple[str, str], float]) -> dict[str, int]:
    totals: dict[str, int] = collections.Counter()
    for (name, labels), v in m.items():
        if name == "besluitbron_cache_entries":
            platform = re.search(r'platform="([^"]+)"', labels).group(1)  # type: ignore[union-attr]
            totals[platform] += int(v)
    return dict(totals)


# ---------------------------------------------------------------------------------------
# The checks at the end.


def check_logs(run: Run) -> None:
    for server in run.servers:
        for log in server.logs:
            for line in log.read_text(errors="replace").splitlines():
                if PANIC.search(line):
                    run.failures.add("panic in the server log", f"{log.name}: {line[:300]}")


def rss_levels(run: Run, server: Server) -> dict[str, float]:
    """The slot's last process: RSS by thirds of its life, and the same less what the
    buffers' memory layers hold (bounded by their caps); the latter must level off."""
    last = [(t, mib, buffered) for g, t, mib, buffered in server.rss if g == server.generation]
    if len(last) < 9:
        run.failures.add("RSS", f"{server.name}: only {len(last)} samples of the last process")
        return {}
    third = len(last) // 3
    parts = {"first": last[:third], "middle": last[third:2 * third], "last": last[2 * third:]}
    levels = {"start": last[0][1]}
    for name, part in parts.items():
        levels[f"{name} third max"] = max(m for _, m, _ in part)
    for name, part in parts.items():
        levels[f"{name} third max less buffers"] = max(m - b for _, m, b in part)
    levels["buffers' memory at the end"] = last[-1][2]
    levels["end"] = last[-1][1]
    if levels["last third max less buffers"] > levels["middle third max less buffers"] * RSS_GROWTH + RSS_SLACK_MIB:
        run.failures.add("RSS does not level off", f"{server.name}: {levels}")
    return levels


def check_traffic(run: Run, final: dict[str, int]) -> dict[str, dict[str, int]]:
    """Every platform got requests at its fake, and calls from the clients, in every phase
    (each phase lasts at least schedule.MIN_PHASE_S, and the prober sees to it: schedule.py)."""
    per_phase: dict[str, dict[str, int]] = {}
    boundaries = run.fake_requests_at_phase + [("end", final)]
    for (label, before), (_, after) in zip(boundaries, boundaries[1:]):
        per_phase[label] = {p: after.get(p, 0) - before.get(p, 0) for p in PLATFORMS}
        idle = [p for p, n in per_phase[label].items() if n == 0]
        if idle:
            run.failures.add("platform without traffic", f"phase {label!r}: no request reached {idle}")
    for label, _ in run.fake_requests_at_phase:
        counter = run.stats.calls_in_phase.get(label, {})
        uncalled = [p for p in PLATFORMS if counter.get(p, 0) == 0]
        if uncalled:
            run.failures.add("platform without traffic", f"phase {label!r}: no client called {uncalled}")
    return per_phase


def requests_of(state: dict[str, Any]) -> dict[str, int]:
    return {p: s["requests"] for p, s in state.items()}


# ---------------------------------------------------------------------------------------
# The run.


async def redis_restart(run: Run, start: float) -> None:
    """Redis killed and started again on the same socket, empty: every shared key lost."""
    run.session_losses.append(time.monotonic())
    await stop_process(run.redis, signal.SIGKILL)
    await start_redis(run)
    print(f"[{time.monotonic() - start:6.1f} s] redis-server killed and started again, empty", flush=True)


async def redis_pause(run: Run, start: float) -> None:
    """Redis stopped (SIGSTOP) for a few seconds: commands hang, then it answers again."""
    assert run.redis is not None
    run.redis.send_signal(signal.SIGSTOP)
    print(f"[{time.monotonic() - start:6.1f} s] redis-server paused (SIGSTOP)", flush=True)
    try:
        await asyncio.sleep(REDIS_PAUSE_S)
    finally:
        run.redis.send_signal(signal.SIGCONT)
    print(f"[{time.monotonic() - start:6.1f} s] redis-server continues (SIGCONT)", flush=True)


async def soak(run: Run) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    async with httpx2.AsyncClient(trust_env=False, timeout=10.0,
                                  limits=httpx2.Limits(max_connections=CLIENTS * 2 + 16)) as http:
        await start_fakes(run)
        if REPLICAS > 1:
            await start_redis(run)
        run.servers = [Server(run, i) for i in range(REPLICAS)]
        for server in run.servers:
            await start_server(run, server, http)
        print(f"{MODE}: fakes for {sorted(run.fakes)}, {', '.join(s.base for s in run.servers)}, "
              f"{CLIENTS} clients, {SOAK_SECS:.0f} s", flush=True)
        # The server whose buffer is checked across its kill: in the replicas mode the owner
        # of OpenBesluitvorming's lease, which the soak kills.
        victim = run.servers[0] if REPLICAS == 1 else await wait_owner(run, http, "obv")
        kept = await markers_before(run, http, victim)
        for server in run.servers:
            await wait_idle(run, server, http, "after the warm-up")  # every marker written to disk
        summary["markers"] = len(kept)

        start = time.monotonic()
        background = [asyncio.create_task(sample_rss(run, http)), asyncio.create_task(watch_429s(run, http))]
        clients = [Client(run, http, i) for i in range(CLIENTS)]
        workers = [asyncio.create_task(c.work()) for c in clients]
        workers.append(asyncio.create_task(Prober(run, http).work()))
        checks: list[asyncio.Task] = []
        at = start
        for index, (phase, length) in enumerate(zip(PHASES, LENGTHS)):
            name, settings, event = phase.name, list(phase.settings), phase.event
            label = f"{index + 1}. {name}"
            # The phase's window at the fakes begins here: their counts, then its faults,
            # then its label (the calls started from now on are the phase's).
            before = requests_of(await fakes_state(run, http))
            await set_faults(run, http, settings)
            run.fake_requests_at_phase.append((label, before))
            run.started_in_phase = collections.Counter()
            run.phase = label
            print(f"[{time.monotonic() - start:6.1f} s] phase {label} ({length:.1f} s): "
                  f"{' '.join(settings) or 'no faults'}", flush=True)
            if event in ("kill", "kill-owner"):
                if event == "kill-owner":
                    victim = await owner_of(run, http, "obv") or victim
                await kill_and_restart(run, victim, http, start)
                checks.append(asyncio.create_task(markers_after(run, http, victim, kept, summary)))
            elif event == "redis-restart":
                await redis_restart(run, start)
            elif event == "redis-pause":
                await redis_pause(run, start)
            at = phase_ends_at(at, time.monotonic() if event else None, length)
            await asyncio.sleep(max(0.0, at - time.monotonic()))
        run.phases_over = True
        # The clients finish their current call (each is bounded).
        with anyio.move_on_after(REQUEST_BOUND_S + 5) as scope:
            await asyncio.gather(*workers)
        if scope.cancelled_caught:
            run.failures.add("clients did not finish", f"after {REQUEST_BOUND_S + 5} s")
        await asyncio.gather(*checks)
        state = await fakes_state(run, http)
        summary["fake requests per phase"] = check_traffic(run, requests_of(state))
        await set_faults(run, http, [])
        idle = {}
        for server in run.servers:
            idle[server.index] = await wait_idle(run, server, http, "after the clients stopped")
            summary[f"left behind at the end ({server.name})"] = left_behind(idle[server.index]) or "nothing"
        # Final 429 count, then stop the watchers.
        state = await fakes_state(run, http)
        own, run.storm_429 = caused_429s(state)
        run.stopping = True
        await asyncio.gather(*background)
        summary["platform 429s caused by BesluitBron"] = own
        summary["platform 429s sent by storms"] = run.storm_429
        if own != sum(run.caused_429.values()):
            run.failures.add("platform 429 caused by BesluitBron", f"{own} in all")
        summary["fakes"] = {p: {k: v for k, v in s.items() if k != "config"} for p, s in state.items()}
        canonical = sum((canonical_counts(m) for m in idle.values()), run.canonical_before_kills)
        summary["level-1 saving (platform calls with level 1, without it)"] = {
            p: f"{state[p]['requests']} with, {state[p]['requests'] + canonical[p]} without "
               f"({100 * canonical[p] / max(1, state[p]['requests'] + canonical[p]):.1f} % saved)"
            for p in sorted(canonical)
        }

        for server in run.servers:
            server.stopped_on_purpose = True
            code = await stop_process(server.proc, signal.SIGTERM)
            if code != 0:
                run.failures.add("clean stop", f"{server.name} exited with {code} on SIGTERM")
            stats = cache_stats(run, server)
            counted = metric_entries(idle[server.index])
            summary[f"buffer entries, cache stats ({server.name})"] = stats
            for platform, n in counted.items():
                if stats.get(platform) != n:
                    run.failures.add("cache stats", f"{server.name}, {platform}: cache stats says "
                                                    f"{stats.get(platform)}, /metrics said {n}")
        if REPLICAS == 1:
            trace = Path(RECORD_TO) if RECORD_TO else run.tmp / "trace.jsonl"
            summary["trace"] = copy_trace(run.servers[0], trace)
            summary["fidelity (simulator against server)"] = fidelity(run, trace)
    check_logs(run)
    for server in run.servers:
        summary[f"RSS MiB ({server.name}, last process)"] = {k: round(v, 1) for k, v in rss_levels(run, server).items()}
    return summary


# The fidelity check's tolerance, in ms. The recorded instants are the server's wall clock
# when its platform task let a call go; the replay's are exact. Between them: the task's
# timer waking a queued call late (tokio's millisecond timer, then the wait for a core on
# a 2-core machine shared with 16 clients, the fakes and this script), and an answer's
# RateLimit feedback reaching the task some ms after its recorded latency. Measured on
# the soak: at most FIDELITY_MEASURED_MS apart; the tolerance leaves room for a busier
# machine while staying below the 1 s a unit of OpenBesluitvorming's budget takes, so
# a call admitted one turn early or late still fails the check.
FIDELITY_MEASURED_MS = 25
FIDELITY_TOLERANCE_MS = 250
# The limited services the soak's traffic reaches, each with the admissions it must be
# compared on at least: a limit belongs to the service a call reaches (bwb and cvdr share
# KOOP's zoekservice and KOOP's repository; ob's text goes to KOOP's publications), and the
# replay compares each service's admissions, whichever platform's. The files' services see
# few (a document's text is kept for weeks: most reads after the first are buffer hits).
FIDELITY_MIN_ADMISSIONS = {"obv": 20, "koop-sru": 20, "rechtspraak": 20, "koop-zoekservice": 20,
                           "koop-publications": 10, "koop-repository": 10}


def fidelity(run: Run, trace: Path) -> list[str]:
    """Replays the recording in the simulator with the recorded latencies and answers and
    compares, per limited service, the admissions it makes with the server's over the whole
    recording. A divergence is a failure that prints both timelines; so is a service not
    compared over the whole recording (its line says from where, and why)."""
    proc = subprocess.run(
        # The server's platform time-out decides how long its paths retry a flight.
        [run.sim_bin, "replay", str(trace), "--fidelity-ms", str(FIDELITY_TOLERANCE_MS),
         "--timeout-ms", str(ATTEMPT_TIMEOUT_MS)],
        capture_output=True, text=True, timeout=300,
    )
    lines = [l for l in proc.stderr.splitlines() if l.startswith("fidelity")]
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        run.failures.add("fidelity", f"the simulator's replay of the recording diverges "
                                     f"(exit {proc.returncode}): {proc.stderr.strip().splitlines()[:1]}")
        return lines
    compared = {}
    for line in lines:
        # `koop-zoekservice (bwb, cvdr): 155 admissions as recorded…`, `obv: 131 …`
        m = re.search(r"\): ([\w-]+)(?: \([^)]*\))?: (\d+) admissions as recorded", line)
        if m:
            compared[m.group(1)] = int(m.group(2))
            if not line.rstrip().endswith("compared over the whole recording"):
                run.failures.add("fidelity", f"{m.group(1)}: not compared over the whole recording: {line}")
    for service, least in FIDELITY_MIN_ADMISSIONS.items():
        if compared.get(service, 0) < least:
            run.failures.add("fidelity", f"{service}: only {compared.get(service, 0)} admissions compared")
    return lines


def copy_trace(server: Server, to: Path) -> str:
    """The recorded trace files (both processes'), oldest first, as one file at `to`."""
    files = sorted((server.data_dir / "trace").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    to.parent.mkdir(parents=True, exist_ok=True)
    lines = 0
    with to.open("wb") as out:
        for f in files:
            data = f.read_bytes()
            lines += data.count(b"\n")
            out.write(data)
    return f"{lines} lines from {len(files)} files in {to}"


def report(run: Run, summary: dict[str, Any], took: float) -> None:
    s = run.stats
    print(f"--- soak summary ({MODE}, {took:.0f} s, {CLIENTS} clients, seed {SEED}) ---")
    print(f"requests: {s.requests}, longest {s.longest_s:.1f} s")
    for outcome, n in sorted(s.outcomes.items(), key=lambda kv: -kv[1]):
        print(f"  {outcome:<45} {n:>6}")
    print("tool errors by kind (start of the text, digits as #):")
    for text, n in s.tool_errors.most_common(12):
        print(f"  {n:>6}  {text}")
    print("per phase:")
    for phase, counter in s.per_phase.items():
        print(f"  {phase:<20} " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])))
    fakes = summary.pop("fakes", {})
    print("per platform (client calls by outcome | the fake: requests, faults it sent):")
    for platform in list(PLATFORMS) + ["all", "page"]:
        counter = s.per_platform.get(platform, collections.Counter())
        calls = ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1]))
        f = fakes.get(platform)
        fake = (f" | {f['requests']} requests; 5xx {f['failures_injected']}, resets {f['connections_reset']}, "
                f"stalls {f['stalled']}, garbage {f['garbage_answers']}, storm 429 {f['storm_rate_limited']}, "
                f"own 429 {f['rate_limited'] - f['storm_rate_limited']}") if f else ""
        print(f"  {platform:<12} {sum(counter.values()):>5} calls: {calls}{fake}")
    for key, value in summary.items():
        print(f"{key}: {value}")


async def main() -> int:
    server_bin = os.environ.get("BESLUITBRON_BIN", "")
    sim_bin = os.environ.get("BESLUITBRON_SIM_BIN", "")
    if not server_bin or not sim_bin:
        print("set BESLUITBRON_BIN and BESLUITBRON_SIM_BIN (scripts/soak does)", file=sys.stderr)
        return 2
    if MODE not in ("single", "replicas"):
        print(f"SOAK_MODE is `single` or `replicas`, not {MODE!r}", file=sys.stderr)
        return 2
    os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    tmp = Path(tempfile.mkdtemp(prefix=f"besluitbron-soak-{MODE}-"))
    run = Run(tmp, server_bin, sim_bin)
    started = time.monotonic()
    summary: dict[str, Any] = {}
    try:
        with anyio.fail_after(SOAK_SECS + 4 * REQUEST_BOUND_S + IDLE_TIMEOUT_S * REPLICAS + 120):
            summary = await soak(run)
    except TimeoutError:
        run.failures.add("run", "the soak did not finish within its bound")
    except Exception as e:  # the harness itself failed: say where
        run.failures.add("run", f"{type(e).__name__}: {e}")
    finally:
        run.stopping = True
        for server in run.servers:
            await stop_process(server.proc, signal.SIGKILL)
        if run.redis is not None:
            try:
                run.redis.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            await stop_process(run.redis, signal.SIGKILL)
        await stop_process(run.fakes_proc, signal.SIGTERM)
    report(run, summary, time.monotonic() - started)
    if run.failures:
        for server in run.servers:
            for log in server.logs[-1:]:
                lines = log.read_text(errors="replace").splitlines()[-20:] if log.exists() else []
                print(f"--- last lines of {log.name} ---\n" + "\n".join(lines))
        print("SOAK FAILED: " + ", ".join(f"{k} ({len(v)})" for k, v in run.failures.by_kind.items()), flush=True)
    else:
        print(f"SOAK PASSED ({MODE})", flush=True)
    if os.environ.get("SOAK_KEEP") or run.failures:
        print(f"logs kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
