"""GET /metrics: the fleet in Prometheus' text format, through prometheus-client.

Gauges are read from the store at each scrape (a custom collector), so every server process and
every restart says the same; the one counter is this process's reports received.
"""

from __future__ import annotations

from typing import Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from tfdoctor.servers.team.store import Store
from tfdoctor.servers.team.summary import STATUS_ORDER


class FleetCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        per_status, per_check = self.store.fleet_counts()
        environments = GaugeMetricFamily("tfdoctor_fleet_environments",
                                         "Environments (machine and interpreter) by the worst status of their last report",
                                         labels=["status"])
        for status in STATUS_ORDER:
            if status != "skip":
                environments.add_metric([status], per_status.get(status, 0))
        yield environments
        checks = GaugeMetricFamily("tfdoctor_fleet_check_results",
                                   "Environments whose last report gave this check this status",
                                   labels=["check", "status"])
        for (check, status), count in sorted(per_check.items()):
            checks.add_metric([check, status], count)
        yield checks


def registry_for(store: Store) -> tuple[CollectorRegistry, Counter]:
    """A registry of the application's own (not prometheus-client's global one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(store))
    received = Counter("tfdoctor_reports_received", "Reports this server process accepted", registry=registry)
    return registry, received
