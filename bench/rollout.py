"""Verifying hosts reading through nginx while the fleet behind it moves from commit A to commit B.

Used by `python -m bench.replicas --rollout` and by tests/service/test_rollout.py. Each `Reader` is a real
`skillwire.Host` connected to the balancer (2026-07-28, stateless: each request may reach any replica) that loads
random changed skills and reads all their files, verified, until told to stop, recovering as a host application
would: `SkillChanged` (the refresh found other content; the approval was revoked) -> load again (the unattended
prompt approves again); any other verification failure or failed read (the refresh found what the host held, so
replicas disagree) -> wait and try again, with doubling backoff, `ATTEMPTS` times. An operation still failing then,
or failing otherwise, is unrecovered. A regression is a skill loaded at A after the host had loaded it at B.

    repo, a, b = make_repo(tmp / "repo", skills=20, files=3, changed=5)
    versions = Versions.of(repo, a, b)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Reader(fleet.url, versions, seed=1).run, stop)
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread
from deploy.fleet import running_fleet
from deploy.rollout import roll_out, wait_for_commit

from bench.generate import generate
from skillwire import ApproveLoads, Host, HostError, ReadFailed, SkillChanged, SkillwireError, VerificationError
from skillwire.sources.git.source import GitSource

ATTEMPTS = 6
BACKOFF_S = 0.025  # then 0.05, 0.1, 0.2, 0.4: 0.775 s of patience in all
LABEL = "fleet"
T = TypeVar("T")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "gc.auto=0"]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run([*_GIT, *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_repo(repo: Path, *, skills: int, files: int, changed: int) -> tuple[Path, str, str]:
    """A repository of generated skills (commit A) and a second commit changing `changed` of them (B: SKILL.md and
    one reference file each); branch `main` is left at A. Returns the repository and the two commit ids."""
    generate(repo, skills=skills, files=files)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "A")
    first = _git(repo, "rev-parse", "HEAD")
    step = max(1, skills // changed)
    for skill_md in sorted(repo.glob("team-*/area-*/skill-*/SKILL.md"))[::step][:changed]:
        skill_md.write_bytes(skill_md.read_bytes() + b"\nRevised in commit B.\n")
        reference = skill_md.parent / "references" / "doc-0.md"
        if reference.exists():
            reference.write_bytes(b"Rewritten in commit B.\n" + reference.read_bytes())
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "B")
    second = _git(repo, "rev-parse", "HEAD")
    _git(repo, "update-ref", "refs/heads/main", first)
    return repo, first, second


Content = frozenset[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Versions:
    """The changed skills' content sets ({uri, digest} of every file) at A and at B, by SKILL.md URI."""

    a: dict[str, Content]
    b: dict[str, Content]

    @classmethod
    def of(cls, repo: Path, first: str, second: str) -> Versions:
        def sets(commit: str) -> dict[str, Content]:
            catalog = GitSource(repo, commit).scan()
            return {s.uri: frozenset((f.uri, f.digest) for f in s.files) for s in catalog.skills}

        at_a, at_b = sets(first), sets(second)
        changed = {uri for uri in at_b if at_a.get(uri) != at_b[uri]}
        return cls({u: at_a[u] for u in changed if u in at_a}, {u: at_b[u] for u in changed})

    @property
    def uris(self) -> list[str]:
        return sorted(self.b)

    def name(self, uri: str, content: Content) -> str:
        """ "A", "B", or "?" (neither: a host must never load that)."""
        return "B" if self.b.get(uri) == content else "A" if self.a.get(uri) == content else "?"


@dataclass
class Tally:
    """What one host went through."""

    loads: int = 0  # skills loaded with every file read and verified
    failures: int = 0  # verification failures and failed reads (each made the host refresh with skills/get)
    changed: int = 0  # ... whose refresh found other content (SkillChanged): loaded again
    unchanged: int = 0  # ... whose refresh found what the host held: the replicas disagreed; retried after a wait
    regressions: int = 0  # a skill loaded at A after this host had loaded it at B
    unrecovered: int = 0  # operations still failing after ATTEMPTS, or failing with another error
    errors: list[str] = field(default_factory=list)
    final: dict[str, str] = field(default_factory=dict)  # the version each changed skill ended on

    def add(self, other: Tally) -> None:
        for name in ("loads", "failures", "changed", "unchanged", "regressions", "unrecovered"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors += other.errors[:5]


class Reader:
    """One verifying host reading changed skills through the balancer at `url` until `stop` is set."""

    def __init__(self, url: str, versions: Versions, *, seed: int) -> None:
        self.url = url
        self.versions = versions
        self.rng = random.Random(seed)
        self.tally = Tally()
        self._seen: dict[str, str] = {}
        self._handles: dict[str, str] = {}
        self.connected = anyio.Event()

    async def run(self, stop: anyio.Event) -> None:
        """Read until `stop`, then load every changed skill once more (`tally.final`)."""
        # No memory cache: every read goes to the fleet, which is what is measured.
        async with Host(prompt=ApproveLoads(), memory_cache_bytes=0) as host:
            await host.add_server(LABEL, self.url)
            # Handles, not `label:uri` refs: the registry resolves a URI by comparing it with every skill's.
            self._handles = {item.uri: item.handle for item in host.catalog()}
            self.connected.set()
            while not stop.is_set():
                await self.visit(host, self.rng.choice(self.versions.uris))
            # No skills/list first: a skill this host held at A meets its change here, so each host meets each
            # change once in all (`changed`), or more often if the fleet made it flip.
            for uri in self.versions.uris:
                self.tally.final[uri] = await self.visit(host, uri) or "failed"

    async def visit(self, host: Host, uri: str) -> str | None:
        """Load the skill at `uri` and read its files, recovering as a host application would; its version."""
        ref = self._handles.get(uri, f"{LABEL}:{uri}")
        delay = BACKOFF_S
        for _ in range(ATTEMPTS):
            try:
                loaded = await host.load_skill(ref)
                root = uri.removesuffix("SKILL.md")
                for record in loaded.files:
                    if record.uri != uri:
                        await host.read_skill_file(ref, record.uri.removeprefix(root))
            except SkillChanged:
                self.tally.failures += 1
                self.tally.changed += 1
                continue
            except (VerificationError, ReadFailed):
                self.tally.failures += 1
                self.tally.unchanged += 1
                await anyio.sleep(delay)
                delay *= 2
                continue
            except (HostError, SkillwireError, OSError) as error:
                self.tally.unrecovered += 1
                self.tally.errors.append(f"{uri}: {type(error).__name__}: {error}")
                return None
            version = self.versions.name(uri, frozenset((r.uri, r.digest) for r in loaded.files))
            if version == "?":  # verified against an entry that is neither A nor B: never acceptable
                self.tally.unrecovered += 1
                self.tally.errors.append(f"{uri}: loaded content of neither commit")
                return None
            self.tally.loads += 1
            if version == "A" and self._seen.get(uri) == "B":
                self.tally.regressions += 1
            self._seen[uri] = version
            return version
        self.tally.unrecovered += 1
        self.tally.errors.append(f"{uri}: still failing after {ATTEMPTS} attempts")
        return None


async def read_during(
    url: str, versions: Versions, roll: Callable[[], T], *, hosts: int, before_s: float, after_s: float
) -> tuple[T, list[Tally]]:
    """`hosts` readers on `url`: all connected, they read for `before_s`, then `roll()` runs (in a thread, while
    they read on) and they read `after_s` more; each then ends with its final pass. `roll`'s result and tallies."""
    readers = [Reader(url, versions, seed=2640 + i) for i in range(hosts)]
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        for reader in readers:
            tasks.start_soon(reader.run, stop)
        for reader in readers:
            await reader.connected.wait()
        await anyio.sleep(before_s)
        rolled = await anyio.to_thread.run_sync(roll)
        await anyio.sleep(after_s)
        stop.set()
    return rolled, [reader.tally for reader in readers]


@dataclass(frozen=True, slots=True)
class Row:
    """One rollout as the rollout table shows it."""

    how: str
    replicas: int
    hosts: int
    total: Tally
    on_b: int  # hosts that ended with every changed skill at B
    mixed_window_s: float


def measure(how: str, repo: Path, first: str, second: str, *, replicas: int, hosts: int, seconds: float) -> Row:
    """Roll a fleet of `replicas` from `first` to `second` while `hosts` read through nginx.

    `how`: "follow" (replicas follow branch main; the branch is moved) or "plan" (replicas start at `first` with
    `--rollout-plan`; `deploy.rollout.roll_out` plans `second` two seconds ahead)."""
    versions = Versions.of(repo, first, second)
    with tempfile.TemporaryDirectory(prefix="skillwire-rollout-") as work:
        plan = Path(work) / "plan.json"
        _git(repo, "update-ref", "refs/heads/main", first)
        planned = how == "plan"
        paths = [f"git:{repo}@{first}" if planned else f"git:{repo}@main"]
        serve_args = ["--rollout-plan", str(plan)] if planned else []
        with running_fleet(paths, replicas=replicas, serve_args=serve_args) as fleet:
            urls = [fleet.replica_url(i) for i in range(replicas)]

            def roll() -> dict[str, float]:
                if how == "plan":
                    return roll_out(plan, second, urls, lead_s=2.0).since
                _git(repo, "update-ref", "refs/heads/main", second)
                return wait_for_commit(urls, second)

            since, tallies = anyio.run(
                lambda: read_during(fleet.url, versions, roll, hosts=hosts, before_s=seconds / 2, after_s=seconds / 2)
            )
    total = Tally()
    for tally in tallies:
        total.add(tally)
    on_b = sum(all(tally.final.get(uri) == "B" for uri in versions.uris) for tally in tallies)
    label = "planned switch (--rollout-plan)" if how == "plan" else "each follows the branch"
    return Row(label, replicas, hosts, total, on_b, max(since.values()) - min(since.values()))


def table(rows: list[Row]) -> str:
    lines = [
        "| rollout                         | replicas | hosts | loads | verif. failures | refresh found a change "
        "| refresh found same | regressions | unrecovered | hosts on B | mixed window ms |",
        "|---------------------------------|---------:|------:|------:|----------------:|-----------------------:"
        "|-------------------:|------------:|------------:|-----------:|----------------:|",
    ]
    for row in rows:
        t = row.total
        lines.append(
            f"| {row.how:<31} | {row.replicas:>8} | {row.hosts:>5} | {t.loads:>5} | {t.failures:>15} "
            f"| {t.changed:>22} | {t.unchanged:>18} | {t.regressions:>11} | {t.unrecovered:>11} "
            f"| {row.on_b:>4} of {row.hosts:<3} | {row.mixed_window_s * 1000:>15.1f} |"
        )
    return "\n".join(lines)
