"""GET /metrics: the fleet in Prometheus' text format, through prometheus-client, made for alerting.

Gauges and the regressions counters are read from the store at each scrape (a custom collector), so every
server process and every restart says the same; the one process counter is the reports this process took.
Per environment: when it last reported (a reporter that died cannot alert otherwise) and how many times it
regressed; per label: environments by status. docs/server.md holds the alert rules built on them, checked
against this output by tests/server/test_metrics.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator, Union

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from tfdoctor.servers.team.store import Store
from tfdoctor.servers.team.summary import STATUS_ORDER

STATUSES = tuple(status for status in STATUS_ORDER if status != "skip")
ENVIRONMENT_LABELS = ["environment", "machine", "python"]


def _timestamp(iso: str) -> float:
    try:
        return dt.datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return 0.0


class FleetCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Union[GaugeMetricFamily, CounterMetricFamily]]:
        per_status, per_check = self.store.fleet_counts()
        environments = GaugeMetricFamily("tfdoctor_fleet_environments",
                                         "Environments (machine and interpreter) by the worst status of their last report",
                                         labels=["status"])
        for status in STATUSES:
            environments.add_metric([status], per_status.get(status, 0))
        yield environments
        checks = GaugeMetricFamily("tfdoctor_fleet_check_results",
                                   "Environments whose last report gave this check this status",
                                   labels=["check", "status"])
        for (check, status), count in sorted(per_check.items()):
            checks.add_metric([check, status], count)
        yield checks
        per_label = GaugeMetricFamily("tfdoctor_label_environments",
                                      "Environments carrying the label (key=value) by the worst status of their "
                                      "last report", labels=["label", "status"])
        for row in self.store.label_counts():
            for status in STATUSES:
                per_label.add_metric([row["label"], status], row.get(status, 0))
        yield per_label
        gauges = self.store.environment_gauges()
        last_seen = GaugeMetricFamily("tfdoctor_environment_last_seen_timestamp_seconds",
                                      "When the environment's last report arrived (Unix time)",
                                      labels=ENVIRONMENT_LABELS)
        regressions = CounterMetricFamily("tfdoctor_environment_regressions",
                                          "Reports of the environment worse than the one before (pass to warn, "
                                          "warn to fail, ...)", labels=ENVIRONMENT_LABELS)
        for row in gauges:
            names = [str(row["id"]), row["hostname"] or row["machine_id"][:12], row["python"]]
            last_seen.add_metric(names, _timestamp(row["last_seen"]))
            regressions.add_metric(names, row["regressions"])
        yield last_seen
        yield regressions
        total = CounterMetricFamily("tfdoctor_regressions", "Reports worse than their environment's previous one, "
                                                            "over the whole fleet")
        total.add_metric([], sum(row["regressions"] for row in gauges))
        yield total


def registry_for(store: Store) -> tuple[CollectorRegistry, Counter]:
    """A registry of the application's own (not prometheus-client's global one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(store))
    received = Counter("tfdoctor_reports_received", "Reports this server process accepted", registry=registry)
    return registry, received
