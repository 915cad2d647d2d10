#!/usr/bin/env python3
"""Soak test of `besluitbron serve` under platform faults, with a kill -9 in the middle.

Starts `besluitbron-sim fakes` and the real server (its embedded store in a temporary data
directory), then lets many simulated clients work for `SOAK_SECS` seconds (default 150):
sessions of both protocol eras (2025-06-18 with initialize and `Mcp-Session-Id`; 2026-07-28
stateless), each from its own client address (`X-Forwarded-For` from a trusted proxy),
doing what assistants do — searches, reference lists, documents, later pages, repeats
that the buffer answers, a few cancellations — on `/mcp/obv`, `/mcp/tk` and `/mcp`.

Meanwhile the fakes are switched, through their control route, through phases of faults:
latency spikes, 5xx, 429 storms, garbage bodies, dropped connections and stalls, with
calm phases between. At about a third of the run the server is killed with SIGKILL and
started again on the same data directory.

Checked throughout and at the end (each failure is printed, the exit code is 1):
- no platform 429 caused by BesluitBron: the fakes' 429s less the ones a storm sent;
- no panic in either server process's log;
- every request is answered or clearly refused: a result, a tool error that names the
  platform (and echoes no internal URL), a JSON-RPC error, or an HTTP refusal with its
  reason (429/503 with Retry-After; 404 for a session the restart ended). Every request
  is bounded; a request that hangs past its bound, an HTTP 500, or a broken connection
  outside the kill's window fails the run;
- resident memory levels off (the second server process's VmRSS: the last third's
  maximum at most `RSS_GROWTH` times the middle third's, plus `RSS_SLACK_MIB`);
- nothing is left behind: once the clients stop, every platform's queue, waiting
  sessions, flights, flight waiters and pending buffer writes are 0 on `/metrics`;
- the buffer is intact after the restart: answers kept (and written) before the kill are
  served from the buffer after it, the same as before; after a clean stop,
  `besluitbron cache stats` counts what `/metrics` counted, and at least those entries.

Prints one line per phase and a summary (requests, outcomes and refusals by kind, RSS
levels), and `SOAK PASSED` or `SOAK FAILED`. Builds nothing: the binaries come from
`BESLUITBRON_BIN` and `BESLUITBRON_SIM_BIN` (`scripts/soak` builds them).

Environment: `SOAK_SECS` (run length, at least 60), `SOAK_CLIENTS` (concurrent clients,
default 16), `SOAK_SEED` (workload seed, default 11), `SOAK_KEEP` (keep the temporary
directory with the logs).
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
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

# ---------------------------------------------------------------------------------------
# Settings.

SOAK_SECS = max(60.0, float(os.environ.get("SOAK_SECS", "150")))
CLIENTS = max(2, int(os.environ.get("SOAK_CLIENTS", "16")))
SEED = int(os.environ.get("SOAK_SEED", "11"))

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
RSS_SLACK_MIB = 8.0

PROTOCOL_LEGACY = "2025-06-18"
PROTOCOL_MODERN = "2026-07-28"
PLATFORM_NAMES = {"obv": "OpenBesluitvorming", "tk": "Tweede Kamer"}
PANIC = re.compile(r"panicked at|\bpanic\b", re.IGNORECASE)

OBV_QUERIES = ["fietspad", "begroting", "woningbouw", "haven", "klimaat", "jeugdzorg", "parkeren", "energie"]
TK_WORDS = ["stikstof", "klimaat", "asiel", "onderwijs", "zorg", "woningbouw"]

# Phases, as (fraction of the run, name, fault settings for the fakes' control route).
# Everything not named is healthy: each phase first switches every fault off.
PHASES: list[tuple[float, str, list[str]]] = [
    (0.10, "calm", []),
    (0.10, "latency spikes", ["obv:latency-ms=900", "tk:latency-ms=1500"]),
    (0.10, "5xx", ["obv:fail-every=3", "tk:fail-every=2"]),
    (0.05, "restart", []),  # kill -9 at the start of this phase, then start again
    (0.10, "429 storm", ["obv:rate-limit-storm=true", "tk:rate-limit-storm=true"]),
    (0.10, "garbage and resets", ["tk:garbage=true", "obv:reset-every=4"]),
    (0.10, "resets and garbage", ["tk:reset-every=3", "obv:garbage=true"]),
    (0.10, "stall", ["obv:stall-ms=6000", "tk:stall-ms=5000"]),
    (0.25, "calm", []),
]
ALL_OFF = [
    f"{p}:{setting}"
    for p in ("obv", "tk")
    for setting in ("latency-ms=0", "stall-ms=0", "fail-every=0", "reset-every=0", "garbage=false",
                    "rate-limit-storm=false")
]


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
    requests: int = 0
    longest_s: float = 0.0
    tool_errors: collections.Counter = field(default_factory=collections.Counter)  # by the start of their text

    def count(self, phase: str, outcome: str, took_s: float) -> None:
        self.requests += 1
        self.outcomes[outcome] += 1
        self.per_phase[phase][outcome] += 1
        self.longest_s = max(self.longest_s, took_s)


class Run:
    """Shared state of one soak run."""

    def __init__(self, tmp: Path, server_bin: str, sim_bin: str) -> None:
        self.tmp = tmp
        self.server_bin = server_bin
        self.sim_bin = sim_bin
        self.data_dir = tmp / "data"
        self.data_dir.mkdir()
        self.failures = Failures()
        self.stats = Stats()
        self.phase = "warm-up"
        self.base = ""
        self.fakes: dict[str, str] = {}
        self.control = ""
        self.server: asyncio.subprocess.Process | None = None
        self.server_logs: list[Path] = []
        self.fakes_proc: asyncio.subprocess.Process | None = None
        # The kill's window: from the kill until the new server answers /healthz.
        self.killed_at: float | None = None
        self.restarted_at: float | None = None
        self.generation = 0  # server processes started so far
        self.rss: list[tuple[int, float, float]] = []  # (generation, time, MiB)
        self.caused_429: collections.Counter = collections.Counter()  # phase -> 429s caused by BesluitBron
        self.storm_429 = 0
        self.stopping = False
        self.stopped_on_purpose = False  # the kill of the restart phase or the final SIGTERM

    def in_kill_window(self, started: float, ended: float) -> bool:
        """Whether a request running from `started` to `ended` overlapped the server's absence."""
        if self.killed_at is None:
            return False
        until = self.restarted_at if self.restarted_at is not None else float("inf")
        return started <= until and ended >= self.killed_at


# ---------------------------------------------------------------------------------------
# Processes.


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_fakes(run: Run) -> None:
    log = run.tmp / "fakes.log"
    proc = await asyncio.create_subprocess_exec(
        run.sim_bin, "fakes", "--listen", "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=log.open("wb"),
    )
    run.fakes_proc = proc
    with anyio.fail_after(START_TIMEOUT_S):
        while len(run.fakes) < 2:
            line = (await proc.stdout.readline()).decode().strip()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError(f"the fakes exited before printing their URLs; see {log}")
            platform, _, url = line.partition(" ")
            run.fakes[platform] = url
    origin = re.match(r"http://[^/]+", run.fakes["obv"]).group(0)  # type: ignore[union-attr]
    run.control = f"{origin}/_control"


def write_config(run: Run) -> Path:
    path = run.tmp / "soak.toml"
    path.write_text(
        "[BesluitBron]\n"
        # The clients come through a "proxy" on loopback, each with its own address.
        'TrustedProxies = ["127.0.0.1"]\n'
        f"RequestTimeoutSecs = {REQUEST_TIMEOUT_S}\n"
        # BesluitBron's own load-status refresh (the system session) runs during the soak.
        "StatusRefreshSecs = 20\n"
        "[BesluitBron.Platforms.obv]\n"
        f"TimeoutMs = {ATTEMPT_TIMEOUT_MS}\n"
        "[BesluitBron.Platforms.tk]\n"
        f"TimeoutMs = {ATTEMPT_TIMEOUT_MS}\n"
    )
    return path


async def start_server(run: Run, http: httpx2.AsyncClient, port: int) -> None:
    run.generation += 1
    log = run.tmp / f"server-{run.generation}.log"
    run.server_logs.append(log)
    run.server = await asyncio.create_subprocess_exec(
        run.server_bin, "serve", "--config", str(write_config(run)),
        "--listen", f"127.0.0.1:{port}", "--data-dir", str(run.data_dir),
        "--platform-url", f"obv={run.fakes['obv']}", "--platform-url", f"tk={run.fakes['tk']}",
        stdin=asyncio.subprocess.DEVNULL, stdout=log.open("wb"), stderr=asyncio.subprocess.STDOUT,
    )
    run.base = f"http://127.0.0.1:{port}"
    asyncio.create_task(watch_exit(run, run.server, run.generation))
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if run.server.returncode is not None:
            raise RuntimeError(f"server exited with {run.server.returncode} at start; see {log}")
        try:
            if (await http.get(f"{run.base}/healthz", timeout=2.0)).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"/healthz not 200 within {START_TIMEOUT_S:.0f} s; see {log}")
        await asyncio.sleep(0.05)


async def watch_exit(run: Run, proc: asyncio.subprocess.Process, generation: int) -> None:
    """Records a server process that ends other than by the soak's own kill or stop."""
    code = await proc.wait()
    planned = (generation < run.generation and run.killed_at is not None) or run.stopping or run.stopped_on_purpose
    if not planned:
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        run.failures.add("server died", f"server process {generation} (pid {proc.pid}) ended by {how} in phase {run.phase!r}")


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


def vm_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


async def sample_rss(run: Run) -> None:
    while not run.stopping:
        proc = run.server
        if proc is not None and proc.returncode is None:
            mib = vm_rss_mib(proc.pid)
            if mib is not None:
                run.rss.append((run.generation, time.monotonic(), mib))
        await asyncio.sleep(0.5)


# ---------------------------------------------------------------------------------------
# The fakes' control route and the server's metrics.


async def set_faults(run: Run, http: httpx2.AsyncClient, settings: list[str]) -> dict[str, Any]:
    response = await http.post(f"{run.control}/faults", content=" ".join(ALL_OFF + settings), timeout=5.0)
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


async def metrics(run: Run, http: httpx2.AsyncClient) -> dict[tuple[str, str], float]:
    """`/metrics` as {(name, labels): value} for the labelled series."""
    text = (await http.get(f"{run.base}/metrics", timeout=5.0)).text
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


async def wait_idle(run: Run, http: httpx2.AsyncClient, what: str) -> dict[tuple[str, str], float]:
    """Polls `/metrics` until nothing is left behind (bounded); the last scrape."""
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    while True:
        m = await metrics(run, http)
        missing = [name for name in LEFT_BEHIND if not any(k[0] == name for k in m)]
        if missing:
            run.failures.add("metrics", f"{what}: /metrics lacks {missing}")
            return m
        rest = left_behind(m)
        if not rest:
            return m
        if time.monotonic() > deadline:
            run.failures.add("left behind", f"{what}: still {rest} after {IDLE_TIMEOUT_S:.0f} s idle")
            return m
        await asyncio.sleep(0.2)


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
    """One client: its address, its era, its endpoint, and (legacy) its session."""

    def __init__(self, run: Run, http: httpx2.AsyncClient, address: str, era: str, path: str) -> None:
        self.run = run
        self.http = http
        self.address = address
        self.era = era
        self.path = path
        self.session_id: str | None = None
        self.session_generation = 0
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

    async def post(self, body: dict[str, Any], name: str | None = None) -> Reply:
        response = await self.http.post(
            f"{self.run.base}{self.path}", content=json.dumps(body),
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
            self.session_generation = self.run.generation
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def close(self) -> None:
        if self.session_id:
            try:
                await self.http.delete(f"{self.run.base}{self.path}", headers=self.headers("", None), timeout=10)
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


def text_of(message: dict[str, Any]) -> str:
    content = (message.get("result") or {}).get("content") or []
    return " ".join(c.get("text", "") for c in content if isinstance(c, dict))


def classify(run: Run, session: Session, tool: str, reply: Reply) -> tuple[str, dict[str, Any] | None]:
    """The outcome of one tools/call; records a failure when it is not a clear answer or refusal."""
    platform = tool.split("_", 1)[0]
    m = reply.message
    if reply.status == 200 and m is not None and "result" in m:
        result = m["result"]
        text = text_of(m)
        if result.get("isError"):
            name = PLATFORM_NAMES[platform]
            if name not in text:
                run.failures.add("unclear tool error", f"{tool}: does not name {name}: {text[:200]!r}")
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
    if reply.status == 404 and session.session_id and session.session_generation < run.generation:
        return "HTTP 404 (session ended by the restart)", None
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


class Client:
    """One simulated assistant: sessions one after another, each a few calls."""

    def __init__(self, run: Run, http: httpx2.AsyncClient, index: int) -> None:
        self.run = run
        self.http = http
        self.rng = random.Random(SEED * 1000 + index)
        self.address = f"198.51.100.{index + 1}"
        self.era = PROTOCOL_LEGACY if index % 2 == 0 else PROTOCOL_MODERN
        self.obv_ids: list[str] = []
        self.tk_ids: list[str] = []
        self.tk_pages: list[tuple[str, int]] = []
        self.last: tuple[str, dict[str, Any]] | None = None

    def pick_path(self) -> str:
        return self.rng.choice(["/mcp/obv", "/mcp/obv", "/mcp/tk", "/mcp/tk", "/mcp"])

    def pick_call(self, path: str) -> tuple[str, dict[str, Any]]:
        r = self.rng
        if self.last and r.random() < 0.15 and (path == "/mcp" or path.endswith(self.last[0].split("_")[0])):
            return self.last
        obv = path == "/mcp/obv" or (path == "/mcp" and r.random() < 0.5)
        x = r.random()
        if obv:
            if x < 0.45:
                args: dict[str, Any] = {"query": r.choice(OBV_QUERIES), "limit": r.choice([5, 10, 24])}
                if r.random() < 0.3:
                    args["sort"] = r.choice(["date_desc", "relevance"])
                return "obv_search", args
            if x < 0.75 and self.obv_ids:
                args = {"id": r.choice(self.obv_ids)}
                if r.random() < 0.3:
                    args.update({"offset": r.choice([0, 1000, 20000]), "length": 2000})
                return "obv_document", args
            if x < 0.9:
                return "obv_sources", r.choice([{}, {"organization_type": "province"}])
            return "obv_status", {}
        if x < 0.45:
            if self.tk_pages and r.random() < 0.25:
                words, offset = r.choice(self.tk_pages)
                return "tk_search", {"query": words, "offset": offset}
            args = {"query": r.choice(TK_WORDS)}
            if r.random() < 0.3:
                args.update({"kind": "cases", "soort": "Motie"})
            return "tk_search", args
        if x < 0.75 and self.tk_ids:
            return "tk_document", {"id": r.choice(self.tk_ids)}
        return r.choice(["tk_factions", "tk_committees"]), {}

    def fresh_call(self, path: str) -> tuple[str, dict[str, Any]]:
        """A call the buffer is unlikely to hold: an odd page of a search."""
        r = self.rng
        if path == "/mcp/obv" or (path == "/mcp" and r.random() < 0.5):
            return "obv_search", {"query": r.choice(OBV_QUERIES), "limit": 5, "offset": r.randint(1, 300)}
        year = r.randint(2000, 2025)
        return "tk_search", {"query": r.choice(TK_WORDS), "date_from": f"{year}-01-01", "date_to": f"{year}-12-31"}

    def learn(self, tool: str, args: dict[str, Any], structured: dict[str, Any]) -> None:
        if tool == "obv_search":
            for hit in structured.get("results") or []:
                if isinstance(hit.get("id"), str) and len(self.obv_ids) < 40:
                    self.obv_ids.append(hit["id"])
        elif tool == "tk_search":
            # Only documents: the ids of a `kind: cases` search are cases, which tk_document
            # rightly does not find.
            for item in [] if args.get("kind") == "cases" else structured.get("results") or []:
                guid = item.get("id")
                if isinstance(guid, str) and len(self.tk_ids) < 40:
                    self.tk_ids.append(guid)
            offset = structured.get("next_offset")
            if isinstance(offset, int) and len(self.tk_pages) < 10:
                self.tk_pages.append((args["query"], offset))

    async def exchange(self, session: Session, tool: str, args: dict[str, Any], cancel_after: float | None) -> None:
        """One tools/call, bounded; classified and counted."""
        run = self.run
        body = session.body("tools/call", {"name": tool, "arguments": args})
        phase, started = run.phase, time.monotonic()
        outcome = None
        try:
            if cancel_after is not None:
                with anyio.move_on_after(cancel_after) as scope:
                    reply = await session.post(body, tool)
                if scope.cancelled_caught:
                    await session.cancel(body["id"])
                    run.stats.count(phase, "cancelled by the client", time.monotonic() - started)
                    return
            else:
                with anyio.fail_after(REQUEST_BOUND_S):
                    reply = await session.post(body, tool)
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
            if run.in_kill_window(started, time.monotonic()):
                outcome = "connection lost to the kill"
                session.session_id = None
            else:
                outcome = "connection error"
                run.failures.add("connection error", f"{tool}: {type(e).__name__}: {e}")
        took = time.monotonic() - started
        run.stats.count(phase, outcome, took)

    async def work(self, until: float) -> None:
        run = self.run
        while time.monotonic() < until and not run.stopping:
            session = Session(run, self.http, self.address, self.era, self.pick_path())
            if self.era == PROTOCOL_LEGACY:
                started = time.monotonic()
                try:
                    with anyio.fail_after(REQUEST_BOUND_S):
                        reply = await session.initialize()
                except (TimeoutError, httpx2.HTTPError) as e:
                    if not run.in_kill_window(started, time.monotonic()):
                        run.failures.add("initialize failed", f"{type(e).__name__}: {e}")
                    await self.pause_while_down()
                    continue
                if not session.session_id:
                    if reply.status not in (429, 503):
                        run.failures.add("initialize refused unclearly", f"HTTP {reply.status} {reply.text[:200]!r}")
                    run.stats.count(run.phase, f"initialize HTTP {reply.status}", 0.0)
                    await asyncio.sleep(float(reply.headers.get("retry-after", "1")))
                    continue
            for _ in range(self.rng.randint(3, 12)):
                if time.monotonic() >= until or run.stopping:
                    break
                if self.era == PROTOCOL_LEGACY and not session.session_id:
                    break
                if self.rng.random() < 0.04:
                    # The user moves on: a new question (not in the buffer), given up soon.
                    tool, args = self.fresh_call(session.path)
                    cancel_after: float | None = self.rng.uniform(0.02, 0.4)
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
        """While the server is away (between the kill and its restart), wait for it."""
        while self.run.killed_at is not None and self.run.restarted_at is None and not self.run.stopping:
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------------------------------
# The buffer across the restart.

MARKERS: list[tuple[str, str, dict[str, Any]]] = [
    ("/mcp/obv", "obv_sources", {}),
    ("/mcp/tk", "tk_factions", {}),
    ("/mcp/tk", "tk_committees", {}),
]


async def markers_before(run: Run, http: httpx2.AsyncClient) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """Fetches the markers (reference lists and a few documents) and their answers."""
    warm = Session(run, http, "198.51.100.250", PROTOCOL_MODERN, "/mcp/obv")
    calls = list(MARKERS)
    found = await call_ok(warm, "obv_search", {"query": "begroting", "limit": 5})
    calls += [("/mcp/obv", "obv_document", {"id": h["id"]}) for h in found.get("results", [])[:3]]
    warm.path = "/mcp/tk"
    found = await call_ok(warm, "tk_search", {"query": "stikstof"})
    calls += [("/mcp/tk", "tk_document", {"id": i["id"]}) for i in found.get("results", [])[:3]]
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


async def markers_after(run: Run, http: httpx2.AsyncClient, kept: list) -> int:
    """Asks every marker again after the restart: each must come from the buffer, unchanged."""
    check = Session(run, http, "198.51.100.251", PROTOCOL_MODERN, "/mcp/obv")
    served = 0
    for path, tool, args, before in kept:
        check.path = path
        with anyio.fail_after(REQUEST_BOUND_S):
            reply = await check.post(check.body("tools/call", {"name": tool, "arguments": args}), tool)
        m = reply.message or {}
        text = text_of(m) if m else ""
        after = (m.get("result") or {}).get("structuredContent")
        if "from BesluitBron's buffer" not in text or "older copy" in text:
            run.failures.add("buffer lost in the restart", f"{tool} {args} was not served from the buffer: {text[:160]!r}")
        elif after != before:
            run.failures.add("buffer changed in the restart", f"{tool} {args}: the answer differs from before the kill")
        else:
            served += 1
    return served


def cache_stats(run: Run) -> dict[str, int]:
    """`besluitbron cache stats`: total entries per platform."""
    import subprocess

    out = subprocess.run([run.server_bin, "cache", "stats", "--data-dir", str(run.data_dir)],
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


def check_logs(run: Run) -> None:
    for log in run.server_logs:
        for line in log.read_text(errors="replace").splitlines():
            if PANIC.search(line):
                run.failures.add("panic in the server log", f"{log.name}: {line[:300]}")


def rss_levels(run: Run) -> dict[str, float]:
    """The last server process's RSS by thirds of its life; checks that it levels off."""
    last = [(t, mib) for g, t, mib in run.rss if g == run.generation]
    if len(last) < 9:
        run.failures.add("RSS", f"only {len(last)} samples of the last server process")
        return {}
    third = len(last) // 3
    first, middle, final = last[:third], last[third:2 * third], last[2 * third:]
    levels = {
        "start": last[0][1],
        "first third max": max(m for _, m in first),
        "middle third max": max(m for _, m in middle),
        "last third max": max(m for _, m in final),
        "end": last[-1][1],
    }
    if levels["last third max"] > levels["middle third max"] * RSS_GROWTH + RSS_SLACK_MIB:
        run.failures.add("RSS does not level off", f"{levels}")
    return levels


async def soak(run: Run) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    async with httpx2.AsyncClient(trust_env=False, timeout=10.0,
                                  limits=httpx2.Limits(max_connections=CLIENTS * 2 + 8)) as http:
        await start_fakes(run)
        port = free_port()
        await start_server(run, http, port)
        print(f"fakes {run.fakes}, server {run.base}, {CLIENTS} clients, {SOAK_SECS:.0f} s", flush=True)
        kept = await markers_before(run, http)
        await wait_idle(run, http, "after the warm-up")  # every marker written to disk
        summary["markers"] = len(kept)

        start = time.monotonic()
        until = start + SOAK_SECS
        background = [asyncio.create_task(sample_rss(run)), asyncio.create_task(watch_429s(run, http))]
        clients = [Client(run, http, i) for i in range(CLIENTS)]
        workers = [asyncio.create_task(c.work(until)) for c in clients]
        at = start
        for fraction, name, settings in PHASES:
            run.phase = name
            await set_faults(run, http, settings)
            print(f"[{at - start:6.1f} s] phase {name}: {' '.join(settings) or 'no faults'}", flush=True)
            if name == "restart":
                run.killed_at = time.monotonic()
                run.stopped_on_purpose = True
                await stop_process(run.server, signal.SIGKILL)
                run.stopped_on_purpose = False
                print(f"[{time.monotonic() - start:6.1f} s] server killed (SIGKILL, exit {run.server.returncode})",
                      flush=True)
                await start_server(run, http, port)
                run.restarted_at = time.monotonic()
                print(f"[{time.monotonic() - start:6.1f} s] server started again on the same data directory",
                      flush=True)
                summary["markers served from the buffer after the restart"] = await markers_after(run, http, kept)
            at += fraction * SOAK_SECS
            await asyncio.sleep(max(0.0, at - time.monotonic()))
        # The clients finish their current call (each is bounded).
        with anyio.move_on_after(REQUEST_BOUND_S + 5) as scope:
            await asyncio.gather(*workers)
        if scope.cancelled_caught:
            run.failures.add("clients did not finish", f"after {REQUEST_BOUND_S + 5} s")
        await set_faults(run, http, [])
        idle = await wait_idle(run, http, "after the clients stopped")
        summary["left behind at the end"] = left_behind(idle) or "nothing"
        # Final 429 count, then stop the watchers.
        own, run.storm_429 = caused_429s(await fakes_state(run, http))
        run.stopping = True
        await asyncio.gather(*background)
        summary["platform 429s caused by BesluitBron"] = own
        summary["platform 429s sent by storms"] = run.storm_429
        if own != sum(run.caused_429.values()):
            run.failures.add("platform 429 caused by BesluitBron", f"{own} in all")
        summary["fakes"] = {p: {k: v for k, v in s.items() if k != "config"} for p, s in (await fakes_state(run, http)).items()}

        run.stopped_on_purpose = True
        code = await stop_process(run.server, signal.SIGTERM)
        if code != 0:
            run.failures.add("clean stop", f"the server exited with {code} on SIGTERM")
        stats = cache_stats(run)
        counted = metric_entries(idle)
        summary["buffer entries (cache stats)"] = stats
        for platform, n in counted.items():
            if stats.get(platform) != n:
                run.failures.add("cache stats", f"{platform}: cache stats says {stats.get(platform)}, /metrics said {n}")
        for platform in ("obv", "tk"):
            if stats.get(platform, 0) < sum(1 for p, *_ in kept if p.endswith(platform)):
                run.failures.add("cache stats", f"{platform}: fewer entries than markers: {stats}")
    check_logs(run)
    summary["RSS MiB (last server process)"] = {k: round(v, 1) for k, v in rss_levels(run).items()}
    return summary


def report(run: Run, summary: dict[str, Any], took: float) -> None:
    s = run.stats
    print(f"--- soak summary ({took:.0f} s, {CLIENTS} clients, seed {SEED}) ---")
    print(f"requests: {s.requests}, longest {s.longest_s:.1f} s")
    for outcome, n in sorted(s.outcomes.items(), key=lambda kv: -kv[1]):
        print(f"  {outcome:<45} {n:>6}")
    print("tool errors by kind (start of the text, digits as #):")
    for text, n in s.tool_errors.most_common(12):
        print(f"  {n:>6}  {text}")
    print("per phase:")
    for phase, counter in s.per_phase.items():
        print(f"  {phase:<20} " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])))
    for key, value in summary.items():
        print(f"{key}: {value}")


async def main() -> int:
    server_bin = os.environ.get("BESLUITBRON_BIN", "")
    sim_bin = os.environ.get("BESLUITBRON_SIM_BIN", "")
    if not server_bin or not sim_bin:
        print("set BESLUITBRON_BIN and BESLUITBRON_SIM_BIN (scripts/soak does)", file=sys.stderr)
        return 2
    os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    tmp = Path(tempfile.mkdtemp(prefix="besluitbron-soak-"))
    run = Run(tmp, server_bin, sim_bin)
    started = time.monotonic()
    summary: dict[str, Any] = {}
    try:
        with anyio.fail_after(SOAK_SECS + 4 * REQUEST_BOUND_S + IDLE_TIMEOUT_S + 120):
            summary = await soak(run)
    except TimeoutError:
        run.failures.add("run", "the soak did not finish within its bound")
    except Exception as e:  # the harness itself failed: say where
        run.failures.add("run", f"{type(e).__name__}: {e}")
    finally:
        run.stopping = True
        await stop_process(run.server, signal.SIGKILL)
        await stop_process(run.fakes_proc, signal.SIGTERM)
    report(run, summary, time.monotonic() - started)
    if run.failures:
        for log in run.server_logs:
            lines = log.read_text(errors="replace").splitlines()[-20:] if log.exists() else []
            print(f"--- last lines of {log.name} ---\n" + "\n".join(lines))
        print("SOAK FAILED: " + ", ".join(f"{k} ({len(v)})" for k, v in run.failures.by_kind.items()), flush=True)
    else:
        print("SOAK PASSED", flush=True)
    if os.environ.get("SOAK_KEEP") or run.failures:
        print(f"logs kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
