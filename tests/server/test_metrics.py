"""/metrics for alerting (issue 37): per-label gauges by status, a last-seen timestamp per environment, the
regressions counters, read by prometheus_client's own parser; and the alert rules docs/server.md documents,
evaluated against that output (their two shapes of expression, without promtool). SQLite and PostgreSQL."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any

from tests.server_support import age_environment, client_for, post

DOCS = Path(__file__).resolve().parents[2] / "docs" / "server.md"


def scrape(client) -> dict[str, list[Any]]:
    """Every sample of /metrics, by sample name."""
    from prometheus_client.parser import text_string_to_metric_families

    answer = client.get("/metrics")
    assert answer.status_code == 200
    samples: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
    return samples


def documented_rules() -> list[dict[str, str]]:
    """The alert rules of docs/server.md's Prometheus block: each rule's name, expression and summary."""
    block = DOCS.read_text(encoding="utf-8").split("```yaml\ngroups:", 1)[1].split("```", 1)[0]
    rules = []
    for chunk in block.split("- alert: ")[1:]:
        rules.append({"alert": chunk.split("\n", 1)[0].strip(),
                      "expr": re.search(r"\n\s*expr: (.+)", chunk)[1].strip(),
                      "summary": re.search(r"\n\s*summary: (.+)", chunk)[1].strip().strip('"')})
    return rules


def firing(expr: str, before: dict[str, list[Any]], after: dict[str, list[Any]], now: float) -> list[dict[str, str]]:
    """The label sets for which `expr` holds, for the two shapes the documented rules use:
    `time() - METRIC > SECONDS` over the last scrape, `increase(METRIC[RANGE]) > N` between two scrapes."""
    stale = re.fullmatch(r"time\(\) - (\w+) > ([\d*\s]+)", expr)
    if stale:
        limit = math.prod(int(factor) for factor in stale[2].split("*"))  # the docs write 24 * 3600
        return [s.labels for s in after[stale[1]] if now - s.value > limit]
    increase = re.fullmatch(r"increase\((\w+)\[\w+\]\) > (\d+)", expr)
    assert increase, f"a rule shape this test cannot evaluate: {expr}"
    earlier = {tuple(sorted(s.labels.items())): s.value for s in before.get(increase[1], [])}
    return [s.labels for s in after[increase[1]]
            if s.value - earlier.get(tuple(sorted(s.labels.items())), 0) > int(increase[2])]


def test_metrics_carry_label_gauges_last_seen_and_regressions(db_url, healthy, broken):
    with client_for(db_url) as client:
        first = post(client, healthy, "machine-m1", {"team": "vision"}, "m1-host").json()
        post(client, broken, "machine-m1", {"team": "vision"}, "m1-host")  # pass -> fail: a regression
        post(client, healthy, "machine-m2", {"team": "vision"})
        post(client, broken, "machine-m3", {"team": "nlp"})  # never passed: no regression
        samples = scrape(client)
    per_label = {(s.labels["label"], s.labels["status"]): s.value for s in samples["tfdoctor_label_environments"]}
    assert per_label[("team=vision", "fail")] == 1 and per_label[("team=vision", "pass")] == 1
    assert per_label[("team=nlp", "fail")] == 1 and per_label[("team=nlp", "pass")] == 0
    seen = {s.labels["machine"]: s.value for s in samples["tfdoctor_environment_last_seen_timestamp_seconds"]}
    assert set(seen) == {"m1-host", "machine-m2"[:12], "machine-m3"[:12]}
    assert all(abs(value - time.time()) < 600 for value in seen.values())
    regressions = {s.labels["machine"]: s.value for s in samples["tfdoctor_environment_regressions_total"]}
    assert regressions == {"m1-host": 1, "machine-m2": 0, "machine-m3": 0}
    assert [s.value for s in samples["tfdoctor_regressions_total"]] == [1]
    labels = samples["tfdoctor_environment_regressions_total"][0].labels
    assert set(labels) == {"environment", "machine", "python"} and labels["environment"] == str(first["environment"])


def test_the_documented_alert_rules_fire_on_a_regression_and_on_a_silent_machine(db_url, healthy, broken):
    rules = {rule["alert"]: rule for rule in documented_rules()}
    assert set(rules) == {"TfdoctorMachineRegressed", "TfdoctorNoReport"}
    with client_for(db_url) as client:
        post(client, healthy, "machine-alert1", {"team": "vision"}, "alert-01")
        quiet = post(client, healthy, "machine-alert2", {"team": "vision"}, "alert-02").json()
        before = scrape(client)
        post(client, broken, "machine-alert1", {"team": "vision"}, "alert-01")
        age_environment(client.app, quiet["environment"], days=2)
        after = scrape(client)
    now = time.time()
    regressed = firing(rules["TfdoctorMachineRegressed"]["expr"], before, after, now)
    silent = firing(rules["TfdoctorNoReport"]["expr"], before, after, now)
    assert [labels["machine"] for labels in regressed] == ["alert-01"]
    assert [labels["machine"] for labels in silent] == ["alert-02"]
    assert firing(rules["TfdoctorMachineRegressed"]["expr"], after, after, now) == []  # nothing new: quiet
    for rule in rules.values():  # every label a summary names is on the series it fires for
        for name in re.findall(r"\$labels\.(\w+)", rule["summary"]):
            assert name in (regressed + silent)[0], (rule["alert"], name)
