"""Operator endpoints beside `/mcp`: liveness, readiness and Prometheus metrics.

`/healthz` answers 200 while the process serves HTTP. `/readyz` answers 200 once the catalog
served was built from the source (one only restored from the digest cache is not ready until the
disk was checked), 503 before, and says which snapshot it serves: generation, counts, a content
fingerprint equal on every replica serving the same skills, the source's revision if it has one, since when
(Unix time), a prepared switch not yet due (`next`: its revision and time; see `rollout.py`), and the parts of
the source serving their last verified state because they cannot be refreshed (`stale`: a gateway's upstream that
is down, since when and why; the server stays ready, serving that state).
`/metrics` is the Prometheus text format from a registry of this app's own (no global state):
requests by method and outcome, their latency, catalog size, index time, re-hash mismatches and
refusals by rule. Labels come from fixed sets, so the series count is bounded whatever clients send.

With authentication on, those figures are for operators (`operator`: `auth.is_operator`, a token with the
`skillwire:operator` scope): they tell the size of the whole catalog and, through the fingerprint, when any skill
changes, which a caller scoped to a few skills must not learn. The probes still answer without a token (kubelets
and balancers send none), but to anyone else `/readyz` says only `{"status": "ready"}` (or "starting", 503);
`/metrics` is an operator path (`OPERATOR_PATHS`: the auth guard refuses any other caller, 401 or 403).

    metrics = ServerMetrics(service)
    metrics.install(server)                  # counts every request the MCP server answers
    routes = ops_routes(service, metrics, operator=is_operator)    # GET /healthz, /readyz, /metrics
"""

from __future__ import annotations

import re
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.process_collector import ProcessCollector
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from skillwire.core.catalog import Catalog
from skillwire.core.digest import sha256_digest_of
from skillwire.core.wire import INTERNAL_ERROR, INVALID_PARAMS
from skillwire.server.skill_service import SkillService
from skillwire.sources.port import Staleness, StaleReportingSource

HEALTH_PATH, READY_PATH, METRICS_PATH = "/healthz", "/readyz", "/metrics"
PROBE_PATHS = (HEALTH_PATH, READY_PATH)
"""Open without a token when authentication is on: load balancer and kubelet probes carry none, and then they say
ready or not and nothing else (the detail of `/readyz` is an operator's)."""
OPERATOR_PATHS = (METRICS_PATH,)
"""Only for an operator's token when authentication is on: catalog-wide figures, traffic and refusals."""

METHODS = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "skills/list",
        "skills/get",
        "resources/list",
        "resources/read",
        "resources/directory/read",
        "resources/templates/list",
        "subscriptions/listen",
        "prompts/list",
        "prompts/get",
    }
)
"""The `method` label's values; any other method is counted as "other" (a client chooses method names)."""

_OUTCOMES = {INVALID_PARAMS: "invalid_params", -32601: "method_not_found", INTERNAL_ERROR: "internal_error"}
_RULE = re.compile(r"[a-z0-9][a-z0-9-]{0,47}")
_MAX_RULES = 64  # distinct `rule` label values; rules come from the code, but a digest cache file could say anything
_NO_STORE = {"Cache-Control": "no-store"}


class ServerMetrics:
    """The metrics of one HTTP app: its own `CollectorRegistry`, a request middleware, the catalog read at scrape."""

    def __init__(self, service: SkillService) -> None:
        self.service = service
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "skillwire_requests",
            "JSON-RPC requests answered, by method and outcome",
            ("method", "outcome"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "skillwire_request_duration_seconds",
            "Time to answer a JSON-RPC request, by method (subscriptions/listen lasts as long as its stream)",
            ("method",),
            registry=self.registry,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
        )
        self.registry.register(_CatalogCollector(service))
        ProcessCollector(registry=self.registry)  # memory, CPU and open files of this process
        # Each labelled child, looked up once: `labels()` checks and hashes its arguments on every call.
        self._counted: dict[tuple[str, str], Counter] = {}
        self._timed: dict[str, Histogram] = {}

    def install(self, server: Server[Any]) -> None:
        """Count every request `server` answers: outermost, so skill routes are seen under their public names."""
        server.middleware.insert(0, self.middleware)

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:  # a notification: nothing is answered
            return await call_next(ctx)
        method = ctx.method if ctx.method in METHODS else "other"
        started = time.perf_counter()
        outcome = "error"
        try:
            result = await call_next(ctx)
            outcome = "ok"
            return result
        except MCPError as err:
            outcome = _OUTCOMES.get(err.error.code, "error")
            raise
        except ValidationError:
            outcome = "invalid_params"
            raise
        finally:
            self.observe(method, outcome, time.perf_counter() - started)

    def observe(self, method: str, outcome: str, seconds: float) -> None:
        """Count one answered request (`method` one of METHODS or "other") and its time, as the middleware does
        (`direct_reads.py` answers reads beside it)."""
        counted = self._counted.get((method, outcome))
        if counted is None:
            counted = self._counted[method, outcome] = self.requests.labels(method, outcome)
        timed = self._timed.get(method)
        if timed is None:
            timed = self._timed[method] = self.latency.labels(method)
        counted.inc()
        timed.observe(seconds)

    def exposition(self, accept: str) -> tuple[bytes, str]:
        """Everything registered, in the format the `Accept` header asks for (Prometheus text, or OpenMetrics),
        and its content type. It reads the catalog: run it off the event loop."""
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type


class _CatalogCollector:
    """Catalog figures read from the service at scrape time: nothing is copied or kept between scrapes."""

    def __init__(self, service: SkillService) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        service = self.service
        catalog = service.catalog
        stats = service.stats
        yield GaugeMetricFamily(
            "skillwire_ready", "1 once the catalog served was built from the source", stats.verified
        )
        yield GaugeMetricFamily(
            "skillwire_catalog_generation", "Rebuilds since start (0: the first)", catalog.generation
        )
        yield GaugeMetricFamily("skillwire_catalog_skills", "Skills served", len(catalog))
        yield GaugeMetricFamily("skillwire_catalog_files", "Distinct files served", catalog.file_count)
        yield GaugeMetricFamily(
            "skillwire_index_duration_seconds", "How long the last scan, update or restore took", stats.index_seconds
        )
        yield CounterMetricFamily(
            "skillwire_rehash_mismatches",
            "Reads whose bytes no longer matched the published digest (each rebuilt the catalog)",
            stats.rehash_mismatches,
        )
        refused = GaugeMetricFamily(
            "skillwire_catalog_refusals", "Skills and paths left out of the catalog, by rule", labels=("rule",)
        )
        for rule, count in sorted(_by_rule(catalog).items()):
            refused.add_metric((rule,), count)
        yield refused


def _by_rule(catalog: Catalog) -> dict[str, int]:
    """Refusals counted by rule, with at most `_MAX_RULES` distinct rules and only rule-shaped ones ("other" else)."""
    counts = Tally(r.rule if _RULE.fullmatch(r.rule) else "other" for r in catalog.refusals)
    if len(counts) <= _MAX_RULES:
        return dict(counts)
    kept = dict(counts.most_common(_MAX_RULES - 1))
    kept["other"] = kept.get("other", 0) + sum(n for rule, n in counts.items() if rule not in kept)
    return kept


@dataclass(frozen=True, slots=True)
class Readiness:
    """What `/readyz` says: whether the server is ready, and which snapshot it serves."""

    ready: bool
    generation: int
    skills: int
    files: int
    snapshot: str
    revision: str | None
    since: float = 0.0
    next_revision: str | None = None
    next_at: float | None = None
    stale: tuple[Staleness, ...] = ()

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "status": "ready" if self.ready else "starting",
            "generation": self.generation,
            "skills": self.skills,
            "files": self.files,
            "snapshot": self.snapshot,
        }
        if self.revision is not None:
            body["revision"] = self.revision
        body["since"] = self.since
        if self.next_at is not None:
            body["next"] = {"revision": self.next_revision, "at": self.next_at}
        if self.stale:
            body["stale"] = [{"source": s.part, "since": s.since, "reason": s.reason} for s in self.stale]
        return body


def snapshot_id(catalog: Catalog) -> str:
    """A fingerprint of what `catalog` serves (every skill's URI, files with digests and sizes, empty folders):
    equal on replicas serving the same content, whatever their generation."""

    def chunks() -> Iterator[bytes]:
        for skill in catalog.skills:
            yield f"{skill.uri}\n".encode()
            for f in skill.files:
                yield f"{f.uri} {f.digest} {f.size}\n".encode()
            for folder in skill.folders:
                yield f"{skill.root_uri}/{folder}/\n".encode()

    return sha256_digest_of(chunks())


class _Snapshots:
    """The last catalog's fingerprint, kept until the catalog is replaced (one entry: bounded)."""

    def __init__(self) -> None:
        self._last: tuple[Catalog, str] | None = None

    def of(self, catalog: Catalog) -> str:
        last = self._last
        if last is not None and last[0] is catalog:
            return last[1]
        found = snapshot_id(catalog)
        self._last = (catalog, found)
        return found


def ops_routes(
    service: SkillService, metrics: ServerMetrics, *, operator: Callable[[Scope], bool] | None = None
) -> list[Route]:
    """`/healthz`, `/readyz` and `/metrics` (GET and HEAD), answered for `service`.

    `operator`: whether a request may see catalog-wide figures (None: every request may, as when anyone who
    connects may list the whole catalog). `/metrics` must then be guarded too (`OPERATOR_PATHS`).
    """
    snapshots = _Snapshots()

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"}, headers=_NO_STORE)

    async def readyz(request: Request) -> Response:
        if operator is not None and not operator(request.scope):
            ready = service.stats.verified
            body = {"status": "ready" if ready else "starting"}
            return JSONResponse(body, status_code=200 if ready else 503, headers=_NO_STORE)
        readiness = await anyio.to_thread.run_sync(_readiness, service, snapshots)
        return JSONResponse(readiness.to_json(), status_code=200 if readiness.ready else 503, headers=_NO_STORE)

    async def metrics_page(request: Request) -> Response:
        body, content_type = await anyio.to_thread.run_sync(metrics.exposition, request.headers.get("accept", ""))
        return Response(body, headers={"Content-Type": content_type, **_NO_STORE})

    return [
        Route(HEALTH_PATH, healthz, methods=["GET", "HEAD"]),
        Route(READY_PATH, readyz, methods=["GET", "HEAD"]),
        Route(METRICS_PATH, metrics_page, methods=["GET", "HEAD"]),
    ]


def _readiness(service: SkillService, snapshots: _Snapshots) -> Readiness:
    catalog = service.catalog
    pending = service.pending
    return Readiness(
        ready=service.stats.verified,
        generation=catalog.generation,
        skills=len(catalog),
        files=catalog.file_count,
        snapshot=snapshots.of(catalog),
        revision=service.source.revision,  # `sources.port.SkillSource.revision`: a git source's commit
        since=service.stats.since,
        next_revision=None if pending is None else pending.source.revision,
        next_at=None if pending is None else pending.at,
        stale=service.source.staleness() if isinstance(service.source, StaleReportingSource) else (),
    )
