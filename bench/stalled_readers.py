"""Clients that ask for a large file and never read the answer, and ordinary readers beside them (issue 19, hole 2).

Every phase runs on a fresh `skillwire serve --http` at its default limits, once without authentication and once
with `--token-file` and `--scopes` (the token's grant is the one skill it reads):

- stalled: N raw sockets, each with a 4 KiB receive buffer, send a valid 2026-07-28 `resources/read` of a 15 MiB
  binary file and never read a byte; after `--hold` s they close. Printed: the server's RSS at start, its peak
  (VmHWM from /proc), its RSS `--after` s after the sockets closed, and the slowest of the small reads (a 60-byte
  SKILL.md on a fresh connection, one every 0.25 s) made while the sockets stalled.
- readers: N concurrent ordinary reads of a 16 MiB text file (every byte read): the peak RSS, how many completed,
  and the slowest small read made meanwhile.

Loopback only; every phase stops by itself (a server passing `--rss-limit-mb` is stopped and the row says so).

    python -m bench.stalled_readers
    python -m bench.stalled_readers --stalled 40 --readers 0 --auth none --repeat 3
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tests.support.stalled import exchange, read_request, stalled_socket, status_kb

from bench.load import serving

STALLED_BYTES = 15 * 1024 * 1024
READER_BYTES = 16 * 1024 * 1024 - 4096  # a skill's files may total 16 MiB: the file, plus room for its SKILL.md
STALLED_URI = "skill://stalled/data.bin"
SMALL_URI = "skill://stalled/SKILL.md"
READER_URI = "skill://readers/data.txt"
READERS_SMALL_URI = "skill://readers/SKILL.md"
STALLED_TOKEN = "stalled-reader-token-0123456789abcdef"
READER_TOKEN = "ordinary-reader-token-0123456789abcdef"
PEAK_BOUND_MB = 300.0
RECOVERY_BOUND_MB = 50.0
SMALL_WAIT_BOUND_S = 1.0


def make_skills(root: Path) -> None:
    """`stalled` (a 15 MiB binary file) and `readers` (a 16 MiB text file), each with a small SKILL.md."""
    stalled = root / "stalled"
    stalled.mkdir(parents=True)
    (stalled / "SKILL.md").write_text("---\nname: stalled\ndescription: A large binary file\n---\n", encoding="utf-8")
    (stalled / "data.bin").write_bytes(os.urandom(STALLED_BYTES))
    readers = root / "readers"
    readers.mkdir()
    (readers / "SKILL.md").write_text("---\nname: readers\ndescription: A large text file\n---\n", encoding="utf-8")
    (readers / "data.txt").write_bytes(b"0123456789abcde\n" * (READER_BYTES // 16))


def auth_options(workdir: Path) -> list[str]:
    """A token file with one token per skill, and a scopes policy granting each token its skill alone."""
    tokens = workdir / "tokens.txt"
    tokens.write_text(f"{STALLED_TOKEN} subject=stalled\n{READER_TOKEN} subject=reader\n", encoding="utf-8")
    tokens.chmod(0o600)
    policy = workdir / "scopes.toml"
    policy.write_text(
        '[[grant]]\nsubject = "stalled"\nskills = ["stalled"]\n\n[[grant]]\nsubject = "reader"\nskills = ["readers"]\n',
        encoding="utf-8",
    )
    return ["--token-file", str(tokens), "--scopes", str(policy)]


@dataclass
class Probe:
    """Small reads made one after another while something else goes on: how long each took (s), and failures."""

    port: int
    uri: str
    token: str | None
    interval: float = 0.25
    waits: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @contextmanager
    def running(self) -> Iterator[None]:
        stop = threading.Event()

        def loop() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                started = time.monotonic()
                try:
                    request = read_request(self.port, self.uri, request_id=n, token=self.token)
                    status, _, body = exchange(self.port, request, timeout=30)
                    if status != 200 or b'"text"' not in body:
                        self.failures.append(f"HTTP {status}: {body[:100]!r}")
                except OSError as err:
                    self.failures.append(f"{type(err).__name__}: {err}")
                self.waits.append(time.monotonic() - started)
                stop.wait(self.interval)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(60)

    def slowest(self) -> str:
        if not self.waits:
            return "-"
        return f"{max(self.waits):.2f} (median {statistics.median(self.waits):.3f}, {len(self.waits)})"


@dataclass
class Row:
    mode: str
    phase: str
    start_mb: float
    peak_mb: float
    after_mb: float | None
    small: str
    outcome: str
    ok: bool


def _watch_rss(pid: int, limit_mb: float, stop: threading.Event, tripped: list[float]) -> None:
    """Stop the server (SIGKILL) if its RSS passes `limit_mb`: the bench must not take the machine with it."""
    while not stop.wait(0.05):
        try:
            rss = status_kb(pid, "VmRSS") / 1024
        except OSError:
            return
        if rss > limit_mb:
            tripped.append(rss)
            with suppress(OSError):
                os.kill(pid, 9)
            return


def stalled_phase(root: Path, workdir: Path, options: list[str], count: int, args: argparse.Namespace) -> Row:
    token = STALLED_TOKEN if options[1:] else None
    with serving(root, workdir, f"stalled-{count}", *options[1:], *args.server_option) as server:
        pid = server.process.pid
        time.sleep(1.0)
        start = status_kb(pid, "VmRSS") / 1024
        stop, tripped = threading.Event(), list[float]()
        guard = threading.Thread(target=_watch_rss, args=(pid, args.rss_limit_mb, stop, tripped), daemon=True)
        guard.start()
        probe = Probe(server.port, SMALL_URI, token)
        sockets: list[socket.socket] = []
        try:
            with probe.running():
                request = read_request(server.port, STALLED_URI, token=token)
                for _ in range(count):
                    try:
                        sockets.append(stalled_socket(server.port, request))
                    except OSError:
                        break
                deadline = time.monotonic() + args.hold
                while time.monotonic() < deadline and not tripped:
                    time.sleep(0.1)
        finally:
            for sock in sockets:
                sock.close()
        if tripped:
            stop.set()
            return Row(options[0], f"{count} stalled", start, tripped[0], None, probe.slowest(), "RSS limit", False)
        time.sleep(args.after)
        stop.set()
        peak = status_kb(pid, "VmHWM") / 1024
        after = status_kb(pid, "VmRSS") / 1024
    waits_ok = bool(probe.waits) and max(probe.waits) < SMALL_WAIT_BOUND_S and not probe.failures
    ok = peak < PEAK_BOUND_MB and after - start < RECOVERY_BOUND_MB and waits_ok
    outcome = f"{len(sockets)} sockets" + (f", {len(probe.failures)} small failed" if probe.failures else "")
    return Row(options[0], f"{count} stalled", start, peak, after, probe.slowest(), outcome, ok)


def readers_phase(root: Path, workdir: Path, options: list[str], count: int, args: argparse.Namespace) -> Row:
    token = READER_TOKEN if options[1:] else None
    with serving(root, workdir, f"readers-{count}", *options[1:], *args.server_option) as server:
        pid = server.process.pid
        time.sleep(1.0)
        start = status_kb(pid, "VmRSS") / 1024
        probe = Probe(server.port, READERS_SMALL_URI, token)
        results: list[bool] = []
        go = threading.Event()

        def one(n: int) -> None:
            go.wait()
            try:
                request = read_request(server.port, READER_URI, request_id=n, token=token)
                status, _, body = exchange(server.port, request, timeout=300)
                results.append(status == 200 and len(body) > READER_BYTES)
            except OSError:
                results.append(False)

        threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in range(count)]
        for thread in threads:
            thread.start()
        with probe.running():
            started = time.monotonic()
            go.set()
            for thread in threads:
                thread.join(300)
            took = time.monotonic() - started
        peak = status_kb(pid, "VmHWM") / 1024
    done = sum(results)
    waits_ok = bool(probe.waits) and max(probe.waits) < SMALL_WAIT_BOUND_S and not probe.failures
    ok = done == count and peak < PEAK_BOUND_MB and waits_ok
    outcome = f"{done}/{count} complete in {took:.1f} s"
    return Row(options[0], f"{count} readers", start, peak, None, probe.slowest(), outcome, ok)


def _print(rows: Sequence[Row]) -> None:
    cells = ("auth", "phase", "start MB", "peak MB", "after MB", "slowest small read s (median, n)", "outcome", "")
    widths = (6, 12, 8, 8, 8, 34, 26, 4)
    print("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        after = f"{r.after_mb:.0f}" if r.after_mb is not None else "-"
        values = (r.mode, r.phase, f"{r.start_mb:.0f}", f"{r.peak_mb:.0f}", after, r.small, r.outcome)
        line = " | ".join(v.ljust(w) for v, w in zip((*values, "ok" if r.ok else "FAIL"), widths, strict=True))
        print(f"| {line} |", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stalled_readers", description=__doc__.splitlines()[0])
    parser.add_argument("--stalled", default="40,200", help="stalled reader counts, comma-separated (default 40,200)")
    parser.add_argument("--readers", type=int, default=20, help="concurrent ordinary readers (default 20; 0: none)")
    parser.add_argument("--auth", default="none,token", help="none, token or both (default none,token)")
    parser.add_argument("--hold", type=float, default=10.0, help="seconds the stalled sockets stay (default 10)")
    parser.add_argument("--after", type=float, default=10.0, help="seconds after they close to read RSS (default 10)")
    parser.add_argument("--repeat", type=int, default=1, help="run every phase this many times (default 1)")
    parser.add_argument("--rss-limit-mb", type=float, default=2500, help="stop a server past this RSS (default 2500)")
    parser.add_argument(
        "--server-option", action="append", default=[], metavar="ARG", help="one more `serve` argument (repeatable)"
    )
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.stalled.split(",") if c]
    modes = [m for m in args.auth.split(",") if m]
    rows: list[Row] = []
    print(
        f"stalled readers of a {STALLED_BYTES >> 20} MiB binary file (held {args.hold:.0f} s, RSS read {args.after:.0f}"
        f" s after they close), {args.readers} ordinary readers of a 16 MiB text file; bounds: peak < "
        f"{PEAK_BOUND_MB:.0f} MB, after - start < {RECOVERY_BOUND_MB:.0f} MB, small reads < {SMALL_WAIT_BOUND_S:.0f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="skillwire-stalled-") as tmp:
        workdir = Path(tmp)
        root = workdir / "skills"
        make_skills(root)
        token_options = auth_options(workdir)
        phases: list[Callable[[], Row]] = []
        for _ in range(args.repeat):
            for mode in modes:
                options = ["none"] if mode == "none" else ["token", *token_options]
                for count in counts:
                    phases.append(partial(stalled_phase, root, workdir, options, count, args))
                if args.readers:
                    phases.append(partial(readers_phase, root, workdir, options, args.readers, args))
        for phase in phases:
            rows.append(phase())
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    _print(rows)
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
