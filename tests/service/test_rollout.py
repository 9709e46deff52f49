"""Rolling replicas from commit A to commit B together (`--rollout-plan`, `service/rollout.py`, `deploy/rollout.py`).

The end-to-end test runs real `skillwire serve` replicas behind Debian's nginx on loopback, a real git repository
made by the test, and real verifying `Host`s reading through the balancer while the plan switches the fleet.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import anyio
import pytest
from bench.rollout import Tally, Versions, make_repo, read_during
from deploy.fleet import running_fleet
from deploy.rollout import roll_out

from skillwire.cli.main import main
from skillwire.core.errors import SourceError
from skillwire.server.skill_service import SkillService, Switch
from skillwire.service.rollout import BadPlan, Plan, follow_plan, parse_plan, planned_source, read_plan
from skillwire.sources.git.source import GitSource
from skillwire.sources.memory.source import MemorySource
from tests.sources.contract.cases import skill_md
from tests.support.git_repos import git, git_init

COMMIT = "3f2a" * 10


def test_a_planned_rollout_through_nginx_ends_every_host_on_b_with_no_unrecovered_error(tmp_path: Path) -> None:
    """Issue 13 point 3: 2 hosts read through nginx while 2 replicas switch from A to B at one planned instant:
    no unrecovered error, no host meets A after B, each host meets each change once (as from one server) and never
    a failure from replicas disagreeing, and every host ends on B."""
    repo, first, second = make_repo(tmp_path / "repo", skills=20, files=3, changed=5)
    versions = Versions.of(repo, first, second)
    plan = tmp_path / "plan.json"
    serve_args = ("--rollout-plan", str(plan))
    with running_fleet([f"git:{repo}@{first}"], replicas=2, serve_args=serve_args, prefix=tmp_path) as fleet:
        replicas = [fleet.replica_url(i) for i in range(2)]
        rolled, tallies = anyio.run(
            lambda: read_during(
                fleet.url,
                versions,
                lambda: roll_out(plan, second, replicas, lead_s=2.5, timeout_s=30),
                hosts=2,
                before_s=0.3,
                after_s=0.5,
            )
        )
    total = Tally()
    for tally in tallies:
        total.add(tally)
        assert tally.final == dict.fromkeys(versions.uris, "B"), tally
        assert tally.changed == len(versions.uris), tally  # each change met exactly once, as from one server
    assert total.unrecovered == 0, total.errors
    assert total.regressions == 0
    assert total.unchanged == 0  # no refresh ever found the host's own content: replicas never disagreed
    assert set(rolled.prepared_s) == set(replicas)  # each showed B under /readyz `next` before the instant
    assert rolled.late == []
    assert set(rolled.since.values()) == {rolled.plan.at}  # both began serving B at the planned instant


def test_a_scheduled_switch_serves_the_new_catalog_to_every_request_from_its_instant_on() -> None:
    """skillwire choice: before `at` the old catalog and source; from `at` on the new ones, without waiting for a
    task to run; `publish_due` then tells listeners once."""
    service = SkillService(MemorySource({"pdf/SKILL.md": skill_md("pdf")}))
    told: list[int] = []
    service.on_change(lambda catalog: told.append(len(catalog)))
    new_source = MemorySource({"pdf/SKILL.md": skill_md("pdf"), "ocr/SKILL.md": skill_md("ocr")})
    at = time.time() + 0.3
    service.schedule(Switch(new_source, new_source.scan(1), at))
    assert len(service.catalog) == 1
    assert service.pending is not None
    while time.time() < at:
        time.sleep(0.01)
    assert len(service.catalog) == 2
    assert service.source is new_source
    assert service.stats.since == at
    assert service.pending is None
    service.publish_due()
    service.publish_due()
    assert told == [2]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[" * 3000 + b"]" * 3000, "larger than"),
        (b"[" * 2000 + b"]" * 2000, "not JSON"),
        (b'{"commit": "' + COMMIT.encode() + b'"}', 'exactly "commit" and "at"'),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": 1, "x": 2}', 'exactly "commit" and "at"'),
        (b'{"commit": "3f2a", "at": 1}', "not a full commit id"),
        (b'{"commit": "main", "at": 1}', "not a full commit id"),
        (b'{"commit": "' + COMMIT.upper().encode() + b'", "at": 1}', "not a full commit id"),
        (b'{"commit": 7, "at": 1}', "must be a string"),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": true}', "must be a number"),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": NaN}', "must be a number"),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": 1e400}', "must be a number"),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": ' + b"9" * 400 + b"}", "must be a number"),
        (b'{"commit": "' + COMMIT.encode() + b'", "at": -5}', "not a Unix time"),
    ],
)
def test_a_malformed_rollout_plan_is_refused_saying_why(data: bytes, says: str) -> None:
    """Hostile input: the plan file is checked for size, JSON, its two fields and their forms."""
    with pytest.raises(BadPlan, match=says):
        parse_plan(data)
    assert parse_plan(Plan(COMMIT, 12.5).to_json()) == Plan(COMMIT, 12.5)


def test_a_plan_that_is_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    """Hostile input: the plan path is opened without waiting for a writer, and must be a (linked) regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(BadPlan, match="cannot read it"):
        read_plan(fifo)
    with pytest.raises(BadPlan, match="cannot read it"):
        read_plan(tmp_path)
    assert read_plan(tmp_path / "absent") is None


def test_a_replica_started_after_the_planned_instant_serves_the_planned_commit(tmp_path: Path) -> None:
    """skillwire choice: a replica (re)started mid-rollout serves what the rest already do, from its first answer;
    before the instant it starts on its own REF, and a plan naming no commit of the repository is an error."""
    repo, first, second = make_repo(tmp_path / "repo", skills=4, files=2, changed=2)
    source = GitSource(repo, first)
    source.scan()
    plan = tmp_path / "plan.json"
    assert planned_source(source, plan) is source  # no plan yet
    plan.write_bytes(Plan(second, time.time() + 60).to_json())
    assert planned_source(source, plan) is source
    configmap = tmp_path / "..2026_12_01"  # as Kubernetes mounts a ConfigMap: the file is a link into a folder
    configmap.mkdir()
    (configmap / "plan.json").write_bytes(Plan(second, time.time() - 1).to_json())
    plan.unlink()
    plan.symlink_to(configmap / "plan.json")
    started = planned_source(source, plan)
    started.scan()
    assert started.revision == second
    plan.unlink()
    plan.write_bytes(Plan("0" * 40, 1).to_json())
    with pytest.raises(SourceError, match="names no commit"):
        planned_source(source, plan)


def test_preparing_the_next_commit_hashes_only_the_blobs_it_changed(tmp_path: Path) -> None:
    """skillwire choice: `GitSource.pinned_at` shares blob digests, so preparing B costs its changed blobs only."""
    repo, first, second = make_repo(tmp_path / "repo", skills=10, files=3, changed=2)
    source = GitSource(repo, first)
    source.scan()
    before = source.digests.hashed
    prepared = source.pinned_at(second)
    prepared.scan()
    assert source.digests.hashed - before == 4  # two skills, a SKILL.md and a reference file each
    assert prepared.revision == second
    assert source.revision == first
    with pytest.raises(SourceError, match="not a full commit id"):
        source.pinned_at("main")


def test_a_replica_follows_a_plan_once_it_has_the_commit_and_ignores_a_bad_plan(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """skillwire choice: a malformed plan is logged and changes nothing; a plan naming a commit not fetched yet is
    prepared as soon as the commit arrives (a git-sync sidecar may fetch after the plan is written)."""
    repo, first, second = make_repo(tmp_path / "repo", skills=4, files=2, changed=2)
    git(repo, "branch", "next", second)
    mirror = git_init(tmp_path / "mirror", bare=True)
    git(mirror, "fetch", "-q", str(repo), "main:main")
    service = SkillService(GitSource(mirror, first))
    plan = tmp_path / "plan.json"

    async def scenario() -> None:
        with anyio.fail_after(20):
            await steps()

    async def steps() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: follow_plan(service, plan, poll_s=0.02))
            plan.write_bytes(b'{"commit": "main", "at": 0}')
            while "rollout plan" not in caplog.text:
                await anyio.sleep(0.02)
            assert "is not a full commit id" in caplog.text
            plan.write_bytes(Plan(second, time.time()).to_json())
            while "not followed yet" not in caplog.text:
                await anyio.sleep(0.02)
            assert service.source.revision == first
            git(mirror, "fetch", "-q", str(repo), "next:next")
            while service.source.revision != second:
                await anyio.sleep(0.02)
            tasks.cancel_scope.cancel()

    with caplog.at_level(logging.INFO, logger="skillwire.service.rollout"):
        anyio.run(scenario)
    assert caplog.text.count("not followed yet") == 1  # said once, tried again quietly


def test_rollout_plan_needs_a_git_source_and_http(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Usage errors of one line each, before anything is served."""
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "SKILL.md").write_bytes(skill_md("pdf"))
    plan = str(tmp_path / "plan.json")
    assert main(["serve", str(tmp_path), "--http", "127.0.0.1:0", "--rollout-plan", plan, "--quiet"]) == 2
    assert "--rollout-plan needs exactly one git:PATH@REF source" in capsys.readouterr().err
    assert main(["serve", str(tmp_path), "--rollout-plan", plan, "--quiet"]) == 2
    assert "--rollout-plan applies to --http only" in capsys.readouterr().err
