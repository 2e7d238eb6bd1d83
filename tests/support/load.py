"""Calls measured under load: percentiles, one level's run, and the control line that shows how much of a
latency bar is the machine's own noise (benchmarks/concurrency.py prints them)."""

from __future__ import annotations

from dataclasses import dataclass, field


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Run:
    """Latencies (ms) and errors of one level, and its wall time (s)."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    wall_s: float = 0.0
    inside: list[float] = field(default_factory=list)  # MCP: the server's own total_ms of each call
    searched: list[float] = field(default_factory=list)  # MCP stdio: its search_ms (planning + engine request)

    def pct(self, q: float) -> float:
        return percentile(self.latencies, q) if self.latencies else float("nan")

    @property
    def throughput(self) -> float:
        return (len(self.latencies) + self.errors) / self.wall_s if self.wall_s else 0.0

    @classmethod
    def merged(cls, *runs: Run) -> Run:
        """Several runs of one path as one: their calls, errors and wall time together."""
        return cls(latencies=[ms for r in runs for ms in r.latencies], errors=sum(r.errors for r in runs),
                   wall_s=sum(r.wall_s for r in runs))

    def row(self, name: str, clients: int) -> str:
        return (f"| {name} | {clients} | {self.pct(.5):.0f} | {self.pct(.95):.0f} | {self.pct(.99):.0f} | "
                f"{self.throughput:.1f} | {self.errors} |")


def control_line(clients: int, before: Run, after: Run) -> str:
    """The bar applied to the engine itself: each raw run against the bound its twin's throughput sets. When raw
    OpenSearch misses its own bound, the 200 ms margin is inside this run's noise."""
    def check(run: Run, twin: Run) -> str:
        bound = clients / twin.throughput * 1000 + 200 if twin.throughput else float("inf")
        return f"p95 {run.pct(.95):.0f} vs {bound:.0f} ms → {'PASS' if run.pct(.95) <= bound else 'FAIL'}"
    return (f"control, raw OpenSearch against the bar ({clients} clients, each raw run against the bound of the "
            f"other): first {check(before, after)}; again {check(after, before)}")
