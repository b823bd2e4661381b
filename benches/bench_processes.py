"""Many processes on one store (issue 42, docs/processes.md): several ``python -m memcore.mcp``
stdio servers on one data folder, as several agent windows start them, each writing
(store_memory) and recalling, against one server alone with the same workload and against
as many servers on stores of their own (the control: the same CPU contention, nothing
shared); how long a write in one process takes to show in another's search_text; reopening
beside running servers; how long the index files go without an owner when their owner is
killed (kill -9) while the others write; and, in the full run, the lag and the write stalls
while another process writes the knowledge graph of a 100k store (processes_graph.py).

    python -m benches.bench_processes [--quick] [--model none|minilm|both] [--out DIR]

Also the runner's area "processes" (`collect`). Each server is talked to with the MCP SDK's
client from a process of its own (as each agent window is its own client), and every call
is timed there, as the agent sees it. ``--model none`` (the default) measures the engine and
MCP cost; when the MiniLM folder exists (benches/embedding_cache.py) the full run measures it
with the model too. Targets (docs/processes.md; reported, never asserted): each process's
store_memory p50 within 2x the one-server figure at 4 processes, and the lag's p99 <= 1 s.

Correctness is checked outside the timed parts: at the end every acknowledged write is
found by search_text in every server and in a fresh open, whose check finds no index
missing an entry, and exactly one server owns the index files after each take-over.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benches import embedding_cache, machine, processes_graph, report
from benches.bench_mcp import fact, question
from benches.report import Record, fmt, latency
from benches.stats import Timings, gc_paused
from benches.targets import BY_KEY

if TYPE_CHECKING:
    from benches.context import Context
    from benches.reliability.client import SyncClient

AREA = "processes"
RESULTS = Path(__file__).resolve().parent / "results"
#: The client processes: spawned, so none inherits this one's threads or open store.
SPAWN = multiprocessing.get_context("spawn")


@dataclass(frozen=True)
class Plan:
    """How much one run does."""

    processes: int
    calls: int  # timed store_memory + recall pairs per process
    warmup: int
    lag_samples: int
    takeovers: int
    reopens: int
    #: Seconds the servers write before the owner is killed, and after.
    before_kill: float
    after_kill: float
    #: Memories in the store of the lag while another process writes the graph (0: not
    #: measured; benches/processes_graph.py), and seconds of each writer's run there.
    graph_store: int = 0
    graph_seconds: float = 10.0


FULL = Plan(
    processes=4,
    calls=200,
    warmup=20,
    lag_samples=100,
    takeovers=3,
    reopens=5,
    before_kill=1.0,
    after_kill=3.0,
    graph_store=100_000,
)
QUICK = Plan(
    processes=2,
    calls=30,
    warmup=5,
    lag_samples=10,
    takeovers=1,
    reopens=2,
    before_kill=0.5,
    after_kill=2.0,
)


# -- the client process of one server ---------------------------------------------------------


def _payload(result: Any) -> dict[str, Any]:
    payload = dict(json.loads(result.content[0].text))
    if result.is_error:
        raise RuntimeError(f"tool error: {payload}")
    return payload


def _token(tag: str, i: int) -> str:
    """A word no other write has: what search_text finds each acknowledged write by."""
    return f"zq{tag}n{i}x"


def _found(client: SyncClient, token: str, memory_id: str) -> bool:
    hits = _payload(client.call("search_text", {"query": token, "limit": 3}))["results"]
    return any(h["id"] == memory_id for h in hits)


def _store(client: SyncClient, tag: str, i: int) -> tuple[str, str]:
    token = _token(tag, i)
    reply = _payload(client.call("store_memory", {"content": f"{fact(i)} {token}"}))
    return token, str(reply["id"])


def _ready(client: SyncClient, timeout: float = 300.0) -> dict[str, Any]:
    """Wait until the store is open and the model (if any) has loaded."""
    deadline = time.monotonic() + timeout
    while True:
        status = _payload(client.call("get_status"))
        if status["store"]["status"] == "open" and status["embedding"]["status"] != "loading":
            return {"embedding": status["embedding"]["status"]}
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server was not ready within {timeout:.0f} s: {status}")
        time.sleep(0.05)


def _warm(client: SyncClient, tag: str, warmup: int) -> dict[str, Any]:
    acked = dict(_store(client, f"{tag}w", i) for i in range(warmup))
    for i in range(warmup):
        client.call("recall", {"query": question(i), "limit": 10})
    return {"acked": acked}


def _workload(client: SyncClient, tag: str, calls: int, start_at: float) -> dict[str, Any]:
    """``calls`` store_memory + recall pairs, each call timed; begins at ``start_at`` (a
    monotonic time, the same clock in every process), so the processes run side by side."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    store_ms, recall_ms = np.empty(calls), np.empty(calls)
    acked: dict[str, str] = {}
    clock = time.perf_counter
    with gc_paused():
        began = time.monotonic()
        for i in range(calls):
            started = clock()
            token, memory_id = _store(client, tag, i)
            stored = clock()
            client.call("recall", {"query": question(i), "limit": 10})
            store_ms[i], recall_ms[i] = (stored - started) * 1e3, (clock() - stored) * 1e3
            acked[token] = memory_id
        ended = time.monotonic()
    return {
        "store_ms": store_ms.tolist(),
        "recall_ms": recall_ms.tolist(),
        "acked": acked,
        "began": began,
        "ended": ended,
    }


def _write_one(client: SyncClient, tag: str, i: int) -> dict[str, Any]:
    token, memory_id = _store(client, tag, i)
    return {"token": token, "id": memory_id, "at": time.monotonic()}


def _poll(client: SyncClient, token: str, memory_id: str, timeout: float) -> dict[str, Any]:
    """When search_text first finds the write (monotonic time), polling every 5 ms."""
    deadline = time.monotonic() + timeout
    polls = 0
    while True:
        polls += 1
        if _found(client, token, memory_id):
            return {"found_at": time.monotonic(), "polls": polls}
        if time.monotonic() > deadline:
            return {"found_at": None, "polls": polls}
        time.sleep(0.005)


def _write_watch(client: SyncClient, tag: str, until: float, pace: float) -> dict[str, Any]:
    """Write until ``until`` (or until the server dies), asking after each write whether
    this server owns the index files; when it first did, and whether it ever let go."""
    acked: dict[str, str] = {}
    owner_at: float | None = None
    owner_lost = False
    error = None
    i = 0
    while time.monotonic() < until:
        try:
            token, memory_id = _store(client, tag, i)
            acked[token] = memory_id
            owner = bool(_payload(client.call("get_status"))["store"]["indexes"]["owner"])
        except Exception as exc:  # the server was killed: what it acknowledged counts
            error = repr(exc)
            break
        if owner and owner_at is None:
            owner_at = time.monotonic()
        owner_lost |= owner_at is not None and not owner
        i += 1
        time.sleep(pace)
    return {"acked": acked, "owner_at": owner_at, "owner_lost": owner_lost, "error": error}


def _unfound(client: SyncClient, acked: dict[str, str]) -> dict[str, Any]:
    missing = [token for token, memory_id in acked.items() if not _found(client, token, memory_id)]
    return {"missing": missing}


def _owner(client: SyncClient) -> dict[str, Any]:
    return {"owner": bool(_payload(client.call("get_status"))["store"]["indexes"]["owner"])}


_COMMANDS = {
    "ready": _ready,
    "warm": _warm,
    "workload": _workload,
    "write": _write_one,
    "poll": _poll,
    "write_watch": _write_watch,
    "unfound": _unfound,
    "owner": _owner,
}


def _server_pid() -> int | None:
    """The server this process started (its child running memcore.mcp), from /proc."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"memcore.mcp" in command:
            return int(entry.name)
    return None


def _client_main(conn: Connection, args: list[str], home: str) -> None:
    """A client process: start the server, answer the first search_text, then run the
    commands sent over ``conn`` until told to stop."""
    from benches.reliability.client import stdio_client_session

    started = time.monotonic()
    try:
        with stdio_client_session(args, Path(home)) as client:
            client.call("search_text", {"query": "anything", "limit": 1})
            conn.send({"ok": True, "pid": _server_pid(), "open_s": time.monotonic() - started})
            while True:
                command, arguments = conn.recv()
                if command == "stop":
                    break
                try:
                    conn.send({"ok": True, **_COMMANDS[command](client, **arguments)})
                except Exception as exc:
                    conn.send({"ok": False, "error": repr(exc)})
    except Exception as exc:  # closing the session of a killed server may fail
        with contextlib.suppress(OSError):
            conn.send({"ok": False, "error": repr(exc)})


# -- the servers, seen from the bench ---------------------------------------------------------


class Server:
    """One ``python -m memcore.mcp`` over stdio, and the client process talking to it."""

    def __init__(self, store: Path, home: Path, model: Path | None, name: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        args = ["--data-dir", str(store), "--tools", "all"]
        args += ["--model", "none"] if model is None else ["--model-path", str(model)]
        self.name = name
        self.conn, theirs = SPAWN.Pipe()
        self.process = SPAWN.Process(
            target=_client_main, args=(theirs, args, str(home)), name=name, daemon=True
        )
        self.process.start()
        theirs.close()
        hello = self.receive(timeout=300)
        self.pid: int | None = hello["pid"]
        self.open_s: float = hello["open_s"]
        self.alive = True

    def send(self, command: str, **arguments: Any) -> None:
        self.conn.send((command, arguments))

    def receive(self, timeout: float = 600) -> dict[str, Any]:
        if not self.conn.poll(timeout):
            raise TimeoutError(f"{self.name} did not answer within {timeout:.0f} s")
        reply: dict[str, Any] = self.conn.recv()
        if not reply.pop("ok"):
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply

    def ask(self, command: str, **arguments: Any) -> dict[str, Any]:
        self.send(command, **arguments)
        return self.receive()

    def kill_server(self) -> None:
        """kill -9 this client's server (its own child, by pid)."""
        if self.pid is None:
            raise RuntimeError(f"{self.name}: its server's pid is unknown")
        os.kill(self.pid, signal.SIGKILL)
        self.alive = False

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.send("stop")
        self.process.join(30)
        if self.process.is_alive():  # a session to a killed server that will not close
            self.process.kill()
            self.process.join(10)
        self.conn.close()


def ask_all(
    servers: Sequence[Server], command: str, *, tag: str | None = None, **arguments: Any
) -> list[dict[str, Any]]:
    """The same command to every server at once (``tag`` made each one's own by its
    index); their replies in order."""
    for i, server in enumerate(servers):
        server.send(command, **arguments, **({} if tag is None else {"tag": f"{tag}{i}"}))
    return [server.receive() for server in servers]


def owner_pid(store: Path) -> int | None:
    """The pid that index/owner.lock names (the owner writes it when it takes the lock)."""
    try:
        return int((store / "index" / "owner.lock").read_text().strip())
    except (OSError, ValueError):
        return None


# -- the measurements ---------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one run (one model) measured and checked."""

    model: str
    records: list[Record] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)


def _timings(samples: list[float]) -> Timings:
    return Timings(np.asarray(samples, dtype=np.float64))


def _workload_records(
    outcome: Outcome, plan: Plan, replies: list[dict[str, Any]], label: str, what: str
) -> list[float]:
    """Records of one workload run (1 or N processes); each process's store_memory p50."""
    n = len(replies)
    prefix = f"processes.{outcome.model}.{label}"
    stores = [_timings(r["store_ms"]) for r in replies]
    pooled_store = _timings([x for r in replies for x in r["store_ms"]])
    pooled_recall = _timings([x for r in replies for x in r["recall_ms"]])
    wall = max(r["ended"] for r in replies) - min(r["began"] for r in replies)
    per_process = ", ".join(f"{t.p50:.2f}" for t in stores)
    outcome.records += [
        latency(
            f"{prefix}.store_memory",
            f"{prefix}.store_memory",
            pooled_store,
            note=f"{what}, all calls pooled; each process's p50 ms: {per_process}",
        ),
        latency(f"{prefix}.recall", f"{prefix}.recall", pooled_recall, note=what),
        Record(
            name=f"{prefix}.throughput",
            group=f"{prefix}.throughput",
            unit="calls/s",
            value=2 * plan.calls * n / wall,
            higher_is_better=True,
            runs=2 * plan.calls * n,
            note=f"store_memory + recall, {what}, {wall:.1f} s",
        ),
    ]
    return [t.p50 for t in stores]


def _ratios(outcome: Outcome, alone: float, separate: list[float], shared: list[float]) -> None:
    """The target (the slowest shared process against one alone) and the control: against
    the slowest of as many processes on stores of their own, which pay the same CPU
    contention but share nothing, so what is left is the cost of sharing the store."""
    n = len(shared)
    prefix = f"processes.{outcome.model}.{n}p.store_memory"
    record = Record(
        name=f"{prefix}.p50_ratio",
        group=f"{prefix}.p50_ratio",
        unit="ratio",
        value=max(shared) / alone,
        scale=n,
        runs=n,
        note=f"the slowest process's store_memory p50 ÷ one process alone ({alone:.2f} ms)",
    )
    _judge(record, "processes_store", outcome.model)
    control = Record(
        name=f"{prefix}.p50_ratio_to_separate",
        group=f"{prefix}.p50_ratio_to_separate",
        unit="ratio",
        value=max(shared) / max(separate),
        scale=n,
        runs=n,
        note=f"the slowest shared process's p50 ÷ the slowest of {n} on stores of their own "
        f"({max(separate):.2f} ms): the cost of sharing at the same CPU load",
    )
    outcome.records += [record, control]


def _judge(record: Record, row: str, model: str) -> None:
    """The budget row answers the text-only run; other models get its bound as a note."""
    if model == "none":
        record.row = row
        return
    bounds = BY_KEY[row].targets
    record.target = dict(bounds)
    measured = {
        stat: record.headline if stat == "value" else getattr(record, stat) for stat in bounds
    }
    record.passed = all(v is not None and v <= bounds[s] for s, v in measured.items())


def _lag(outcome: Outcome, plan: Plan, servers: list[Server]) -> dict[str, str]:
    """A write in one process, polled for in another: ms from its acknowledgement to the
    other's search_text finding it."""
    acked: dict[str, str] = {}
    lags: list[float] = []
    unseen = 0
    n = len(servers)
    for i in range(plan.lag_samples):
        writer = servers[i % n]
        reader = servers[(i % n + 1 + (i // n) % (n - 1)) % n]
        wrote = writer.ask("write", tag="lag", i=i)
        acked[wrote["token"]] = wrote["id"]
        seen = reader.ask("poll", token=wrote["token"], memory_id=wrote["id"], timeout=5.0)
        if seen["found_at"] is None:
            unseen += 1
        else:
            lags.append((seen["found_at"] - wrote["at"]) * 1e3)
    if unseen:
        outcome.failures.append(f"{unseen} writes not seen by another process within 5 s")
    record = latency(
        f"processes.{outcome.model}.{n}p.lag",
        f"processes.{outcome.model}.{n}p.lag",
        _timings(lags),
        scale=n,
        note=f"store_memory acknowledged in one process until another's search_text finds it "
        f"(polled every 5 ms); {n} processes open, idle otherwise; {unseen} unseen in 5 s",
    )
    _judge(record, "processes_lag", outcome.model)
    outcome.records.append(record)
    return acked


def _reopen(outcome: Outcome, plan: Plan, store: Path, acked: dict[str, str], n: int) -> None:
    """``Memory(path)`` beside the running servers, to the first answered search_text."""
    import memcore

    token, memory_id = next(iter(acked.items()))
    samples = []
    for _ in range(plan.reopens):
        started = time.perf_counter()
        with memcore.Memory(store, model=None) as mem:
            hits = mem.search_text(token, limit=3)
            samples.append(time.perf_counter() - started)
        if memory_id not in [h.memory.id for h in hits]:
            outcome.failures.append("a reopened Memory did not find an acknowledged write")
    outcome.records.append(
        _seconds(
            f"processes.{outcome.model}.{n}p.reopen.memory",
            samples,
            f"Memory(path, model=None) beside {n} running servers, to the first search_text",
        )
    )


def _seconds(name: str, samples: list[float], note: str) -> Record:
    values = np.asarray(samples)
    return Record(
        name=name,
        group=name,
        unit="s",
        p50=float(np.percentile(values, 50)),
        p95=float(np.percentile(values, 95)),
        p99=float(np.percentile(values, 99)),
        runs=len(samples),
        note=note,
    )


def _takeovers(
    outcome: Outcome,
    plan: Plan,
    servers: list[Server],
    start: _Starter,
) -> dict[str, str]:
    """Kill -9 the owner while every server writes; seconds until a survivor reports
    ``owner: true``. The killed one is restarted after each round (its start beside the
    others is a reopen sample)."""
    acked: dict[str, str] = {}
    times: list[float] = []
    restarts: list[float] = []
    store = start.store
    for round_ in range(plan.takeovers):
        until = time.monotonic() + plan.before_kill + plan.after_kill
        for i, server in enumerate(servers):
            server.send("write_watch", tag=f"t{round_}p{i}", until=until, pace=0.02)
        time.sleep(plan.before_kill)
        pid = owner_pid(store)
        victim = next((s for s in servers if s.pid == pid), None)
        if victim is None:
            outcome.failures.append(f"round {round_}: owner.lock names pid {pid}, no server's")
            for server in servers:
                server.receive()
            continue
        killed_at = time.monotonic()
        victim.kill_server()
        replies = {s.name: s.receive() for s in servers}
        for reply in replies.values():
            acked.update(reply["acked"])
        survivors = [s for s in servers if s is not victim]
        owners = [replies[s.name]["owner_at"] for s in survivors if replies[s.name]["owner_at"]]
        if len(owners) != 1:
            outcome.failures.append(f"round {round_}: {len(owners)} survivors became owner")
        if any(replies[s.name]["owner_lost"] for s in survivors):
            outcome.failures.append(f"round {round_}: a survivor stopped owning the files")
        if owners:
            times.append(min(owners) - killed_at)
        if replies[victim.name]["error"] is None:
            outcome.failures.append(f"round {round_}: the killed server still answered")
        now = [s.ask("owner")["owner"] for s in survivors]
        if sum(now) != 1:
            outcome.failures.append(f"round {round_}: {sum(now)} survivors own the files")
        victim.close()
        index = servers.index(victim)
        servers[index] = start(f"{victim.name}-r{round_}")
        servers[index].ask("ready")
        restarts.append(servers[index].open_s)
    n = len(servers)
    if times:
        outcome.records.append(
            _seconds(
                f"processes.{outcome.model}.{n}p.takeover",
                times,
                f"kill -9 of the owner while all {n} write (one store_memory + get_status "
                "every 20 ms each) until a survivor's get_status reports owner: true",
            )
        )
    outcome.records.append(
        _seconds(
            f"processes.{outcome.model}.{n}p.reopen.server",
            restarts,
            f"a killed server started again beside the {n - 1} others: spawn, handshake, "
            "first search_text answered",
        )
    )
    outcome.checks["takeover_rounds"] = plan.takeovers
    return acked


class _Starter:
    """Starts servers on one store, each with a home of its own."""

    def __init__(self, work: Path, model: Path | None) -> None:
        self.work, self.model, self.store = work, model, work / "store"

    def __call__(self, name: str) -> Server:
        return Server(self.store, self.work / name, self.model, name)


def _final_checks(
    outcome: Outcome, servers: list[Server], store: Path, acked: dict[str, str]
) -> None:
    """Every acknowledged write is found by every server and by a fresh open, whose check
    finds no index missing an entry."""
    import memcore

    missing = [r["missing"] for r in ask_all(servers, "unfound", acked=acked)]
    owners = [s.ask("owner")["owner"] for s in servers]
    outcome.checks.update(
        acknowledged=len(acked),
        unfound_per_server=[len(m) for m in missing],
        owners_at_end=sum(owners),
    )
    if any(missing):
        outcome.failures.append(f"acknowledged writes not found: {[m[:3] for m in missing]}")
    if sum(owners) != 1:
        outcome.failures.append(f"{sum(owners)} servers own the index files at the end")
    for server in servers:
        server.close()
    with memcore.Memory(store, model=None) as mem:
        lost = [t for t, i in acked.items() if i not in _ids(mem.search_text(t, limit=3))]
        report = mem.check()
    outcome.checks.update(
        fresh_open_unfound=len(lost),
        check_ok=report.ok,
        check_missing={i.index: i.missing for i in report.indexes},
    )
    if lost or not report.ok:
        outcome.failures.append(
            f"fresh open: {len(lost)} unfound, check problems {report.problems}"
        )


def _ids(hits: Sequence[Any]) -> list[str]:
    return [h.memory.id for h in hits]


def run(plan: Plan, model: Path | None, work: Path, log: Any = print) -> Outcome:
    """One model's measurements: one server alone, ``plan.processes`` on stores of their
    own (the control), then as many on one store."""
    outcome = Outcome(model="none" if model is None else "minilm")
    label = f"[{AREA}] model {outcome.model}"
    alone = _Starter(work / "alone", model)
    log(f"{label}: one server, {plan.calls} store_memory + recall")
    outcome.load.append(os.getloadavg()[0])
    server = alone("alone")
    try:
        server.ask("ready")
        server.ask("warm", tag="a", warmup=plan.warmup)
        reply = server.ask("workload", tag="a", calls=plan.calls, start_at=0.0)
    finally:
        server.close()
    (alone_p50,) = _workload_records(outcome, plan, [reply], "1p", "one process alone")

    n = plan.processes
    log(f"{label}: {n} servers on stores of their own (the control), same workload each")
    separate = [_Starter(work / f"separate-{i}", model)(f"separate-{i}") for i in range(n)]
    try:
        ask_all(separate, "ready")
        ask_all(separate, "warm", tag="s", warmup=plan.warmup)
        begin = time.monotonic() + 0.2
        replies = ask_all(separate, "workload", tag="s", calls=plan.calls, start_at=begin)
    finally:
        for server in separate:
            server.close()
    separate_p50 = _workload_records(
        outcome, plan, replies, f"{n}p.separate", f"{n} processes, each on a store of its own"
    )
    start = _Starter(work / "shared", model)
    log(f"{label}: {n} servers on one store, {plan.calls} store_memory + recall each")
    outcome.load.append(os.getloadavg()[0])
    servers: list[Server] = []
    acked: dict[str, str] = {}
    try:
        for i in range(n):
            servers.append(start(f"server-{i}"))
        ask_all(servers, "ready")
        for warmed in ask_all(servers, "warm", tag="w", warmup=plan.warmup):
            acked.update(warmed["acked"])
        begin = time.monotonic() + 0.2
        replies = ask_all(servers, "workload", tag="p", calls=plan.calls, start_at=begin)
        for reply in replies:
            acked.update(reply["acked"])
        shared_p50 = _workload_records(
            outcome, plan, replies, f"{n}p", f"{n} processes on one store"
        )
        _ratios(outcome, alone_p50, separate_p50, shared_p50)
        log(f"{label}: visibility lag, {plan.lag_samples} writes")
        acked.update(_lag(outcome, plan, servers))
        log(f"{label}: reopen beside the servers, {plan.reopens} times")
        _reopen(outcome, plan, start.store, acked, n)
        log(f"{label}: owner killed {plan.takeovers} times while all write")
        outcome.load.append(os.getloadavg()[0])
        acked.update(_takeovers(outcome, plan, servers, start))
        log(f"{label}: checking {len(acked):,} acknowledged writes in every server")
        _final_checks(outcome, servers, start.store, acked)
    finally:
        for server in servers:
            server.close()
    return outcome


def measure(plan: Plan, models: Sequence[Path | None], work: Path, log: Any) -> list[Outcome]:
    """``run`` for each model, each in a folder of its own under ``work``; the text-only
    one gains the lag while another process writes the graph (when the plan has it)."""
    outcomes = [
        run(plan, model, work / ("none" if model is None else "minilm"), log) for model in models
    ]
    text_only = next((o for o in outcomes if o.model == "none"), None)
    if plan.graph_store and text_only is not None:
        records, failure = processes_graph.collect(
            work / "graph", plan.graph_store, plan.graph_seconds, log
        )
        text_only.records += records
        if failure:
            text_only.failures.append(failure)
    return outcomes


def _models(choice: str, quick: bool) -> list[Path | None]:
    """``none``, ``minilm`` or ``both``; ``auto``: both when the model folder exists (text
    only in the quick run)."""
    folder = embedding_cache.model_dir()
    if choice == "none" or (choice == "auto" and (quick or folder is None)):
        return [None]
    if folder is None:
        raise SystemExit(f"no MiniLM model: {embedding_cache.available()}")
    return [folder] if choice == "minilm" else [None, folder]


def collect(ctx: Context) -> list[Record]:
    """The runner's entry point: 4 servers (2 in the quick run), text only, and with MiniLM
    too in the full run when its folder exists."""
    plan = QUICK if ctx.settings.quick else FULL
    outcomes = measure(plan, _models("auto", ctx.settings.quick), ctx.scratch_dir(AREA), ctx.log)
    for outcome in outcomes:
        for failure in outcome.failures:
            ctx.fail(f"processes ({outcome.model}): {failure}")
    return [r for o in outcomes for r in o.records]


# -- the report -----------------------------------------------------------------------------------


def _by_name(outcome: Outcome) -> dict[str, Record]:
    return {r.name.removeprefix(f"processes.{outcome.model}."): r for r in outcome.records}


def _ms(record: Record | None) -> str:
    if record is None:
        return "—"
    return f"{fmt(record.p50, 'ms')} / {fmt(record.p99, 'ms')}"


def _verdict(record: Record | None) -> str:
    if record is None or record.passed is None:
        return "—"
    return "yes" if record.passed else "**NO**"


def render(outcomes: Sequence[Outcome], plan: Plan, info: dict[str, Any]) -> str:
    """processes.md: per model, one process vs N (on stores of their own, and on one), the
    lag, reopen and take-over times, and the checks."""
    n = plan.processes
    lines = [
        "# Many processes on one store (benches/bench_processes.py)",
        "",
        f"`python -m benches.bench_processes` at {info['memcore_commit']}, {info['date']}: "
        f"{n} `python -m memcore.mcp` stdio servers on one data folder, each driven by the "
        "MCP SDK's client from a process of its own, against one server alone with the same "
        f"workload ({plan.calls} store_memory + recall pairs per process after "
        f"{plan.warmup} untimed), and against {n} servers each on a store of its own (the "
        "control: the same CPU contention, nothing shared). Times are per call at the "
        "client, in ms (p50 / p99). Targets (reported, never asserted): each process's "
        f"store_memory p50 within 2× the one-server figure at {n} processes; the lag's "
        "p99 ≤ 1 s.",
        "",
    ]
    for outcome in outcomes:
        lines += _model_section(outcome, n)
    lines += _graph_section(outcomes, plan)
    lines += ["## Machine", ""] + [f"- {key}: {value}" for key, value in info.items()]
    return "\n".join(lines) + "\n"


def _model_section(outcome: Outcome, n: int) -> list[str]:
    r = _by_name(outcome)
    alone, apart, shared = (r.get(f"{x}.store_memory") for x in ("1p", f"{n}p.separate", f"{n}p"))
    ratio, control = (
        r.get(f"{n}p.store_memory.p50_ratio"),
        r.get(f"{n}p.store_memory.p50_ratio_to_separate"),
    )
    lag, takeover = r.get(f"{n}p.lag"), r.get(f"{n}p.takeover")
    restart, reopen = r.get(f"{n}p.reopen.server"), r.get(f"{n}p.reopen.memory")
    rates = [r.get(f"{x}.throughput") for x in ("1p", f"{n}p.separate", f"{n}p")]
    recalls = [r.get(f"{x}.recall") for x in ("1p", f"{n}p.separate", f"{n}p")]
    load = ", ".join(f"{x:.1f}" for x in outcome.load)
    return [
        f"## Model: {outcome.model}",
        "",
        f"1-minute load average as the phases started: {load} (2 cores).",
        "",
        f"| measure | 1 process | {n} on stores of their own | {n} on one store | target | pass |",
        "|---|---|---|---|---|---|",
        f"| store_memory p50 / p99 ms | {_ms(alone)} | {_ms(apart)} | {_ms(shared)} | | |",
        f"| each process's store_memory p50 (ms) | {_per_process(alone)} | "
        f"{_per_process(apart)} | {_per_process(shared)} | | |",
        "| the slowest process's store_memory p50 ÷ one alone | 1 | | "
        f"{_value(ratio)} | ≤ 2 | {_verdict(ratio)} |",
        f"| the same ÷ the slowest on stores of their own (the cost of sharing) | | 1 | "
        f"{_value(control)} | | |",
        f"| recall p50 / p99 ms | {' | '.join(_ms(x) for x in recalls)} | | |",
        "| throughput, calls/s of all processes (store_memory + recall) | "
        f"{' | '.join(_value(x) for x in rates)} | | |",
        f"| visibility lag p50 / p99 ms (a write in one, search_text in another) | | | "
        f"{_ms(lag)} | p99 ≤ 1,000 | {_verdict(lag)} |",
        "| reopen: Memory() beside the servers to a first search, p50 s | | | "
        f"{fmt(reopen.p50 if reopen else None, 's')} | | |",
        "| reopen: a killed server started again to its first answer, p50 s | | | "
        f"{fmt(restart.p50 if restart else None, 's')} | | |",
        f"| owner take-over after kill -9, p50 / max s | | | {_takeover_text(takeover)} | | |",
        "",
        "Checked outside the timed parts: " + _checks_text(outcome),
        "",
    ]


def _graph_section(outcomes: Sequence[Outcome], plan: Plan) -> list[str]:
    """The lag and the stalls while another process writes the knowledge graph."""
    r = {rec.name: rec for o in outcomes for rec in o.records}
    rows = []
    for mode, what in (("memories", "plain memories"), ("graph", "entities (create_entity)")):
        lag = r.get(f"processes.none.2p.lag_while_writing_{mode}")
        own = r.get(f"processes.none.2p.store_memory_while_writing_{mode}")
        if lag is None or own is None:
            continue
        rows.append(
            f"| {what} | {fmt(lag.p50, 'ms')} / {fmt(lag.p99, 'ms')} / {fmt(lag.value, 'ms')} "
            f"| {fmt(own.p50, 'ms')} / {fmt(own.p99, 'ms')} / {fmt(own.value, 'ms')} |"
        )
    if not rows:
        return []
    return [
        f"## While another process writes the knowledge graph ({plan.graph_store:,} memories)",
        "",
        "Two processes (`memcore.Memory`, text only) on a store of "
        f"{plan.graph_store:,} memories and {plan.graph_store // 10:,} entities; one writes "
        f"every 300 ms for {plan.graph_seconds:.0f} s, the other polls search_text for each "
        "of its probe memories and stores a memory of its own every 10 ms "
        "(benches/processes_graph.py). ms, p50 / p99 / max:",
        "",
        "| the other process writes | lag until found here | this process's store_memory |",
        "|---|---|---|",
        *rows,
        "",
    ]


def _value(record: Record | None) -> str:
    return fmt(record.value if record else None, record.unit if record else "")


def _per_process(record: Record | None) -> str:
    return record.note.split(": ", 1)[1] if record and ": " in record.note else "—"


def _takeover_text(record: Record | None) -> str:
    if record is None or record.p50 is None:
        return "—"
    return f"{record.p50:.2f} / {record.p99:.2f} ({record.runs} kills)"


def _checks_text(outcome: Outcome) -> str:
    c = outcome.checks
    if not c:
        return "not reached (see failures)."
    text = (
        f"{c.get('acknowledged', 0):,} acknowledged writes, unfound per server "
        f"{c.get('unfound_per_server')}, in a fresh open {c.get('fresh_open_unfound')}; "
        f"check ok: {c.get('check_ok')} (missing per index {c.get('check_missing')}); "
        f"servers owning the index files at the end: {c.get('owners_at_end')}."
    )
    if outcome.failures:
        text += " **Failures:** " + "; ".join(outcome.failures)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.bench_processes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="2 servers, few calls (CI)")
    parser.add_argument(
        "--model", choices=("auto", "none", "minilm", "both"), default="auto", help="(auto)"
    )
    parser.add_argument("--processes", type=int, help="servers on the one store")
    parser.add_argument("--calls", type=int, help="timed store_memory + recall pairs each")
    parser.add_argument("--out", type=Path, help="results folder (benches/results[/quick])")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.processes or args.calls:
        plan = Plan(
            **{
                **asdict(plan),
                "processes": args.processes or plan.processes,
                "calls": args.calls or plan.calls,
            }
        )
    if plan.processes < 2:
        parser.error("--processes must be at least 2")
    out = args.out or (RESULTS / "quick" if args.quick else RESULTS)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="memcore-bench-processes-") as work:
        outcomes = measure(plan, _models(args.model, args.quick), Path(work), log)
    report.finalize([r for o in outcomes for r in o.records])
    info = machine.describe()
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "machine": info,
        "plan": asdict(plan),
        "runs": [
            {
                "model": o.model,
                "load": o.load,
                "checks": o.checks,
                "failures": o.failures,
                "records": [r.to_json() for r in o.records],
            }
            for o in outcomes
        ],
    }
    (out / "processes.json").write_text(json.dumps(payload, indent=1) + "\n")
    (out / "processes.md").write_text(render(outcomes, plan, info))
    print((out / "processes.md").read_text())
    print(f"wrote {out / 'processes.json'} and processes.md", file=sys.stderr)
    return 1 if any(o.failures for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
