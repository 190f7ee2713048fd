"""`--format openmetrics` (issue 28): one environment's verdict for node_exporter's textfile collector, read
back by prometheus_client's own parsers (OpenMetrics and Prometheus text), hostile strings included."""

from __future__ import annotations

import json

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

from tests.cli_support import run_cli, write
from tests.fixtures_support import FIXTURES, fixture_id, fixture_paths
from tfdoctor.render.openmetrics import STATUSES, render
from tfdoctor.render.sanitize import clean
from tfdoctor.operations.explain import explained_document as explain
from tfdoctor.report.saved import read_report


def samples(text: str, parser) -> dict[tuple, float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in parser(text) for s in f.samples}


@pytest.mark.parametrize("path", fixture_paths()[::4], ids=fixture_id)
def test_both_parsers_read_every_check_and_its_status(path):
    document = explain(read_report(str(path)))
    text = render(document)
    for parser in (openmetrics_families, prometheus_families):
        read = samples(text, parser)
        python = document["target"]["python"] or ""
        for result in document["results"]:
            for status in STATUSES:
                key = ("tfdoctor_check_status", tuple(sorted({"check": result["id"], "status": status,
                                                              "python": python}.items())))
                assert read[key] == (1 if result["status"] == status else 0)
        bad = any(r["status"] in ("fail", "error") for r in document["results"])
        assert read[("tfdoctor_problems", (("python", python),))] == (1 if bad else 0)
        for status in STATUSES:
            assert read[("tfdoctor_checks", (("python", python), ("status", status)))] == document["totals"][status]


def test_hostile_strings_stay_inside_their_label_values():
    document = explain(read_report(str(FIXTURES / "linux" / "kaggle-cudnn-9.0-vs-9.3.json")))
    hostile = 'C:\\x" } tfdoctor_problems 0\n# EOF\n\x1b[2J\x07'
    document["target"]["python"] = hostile
    document["results"][0]["id"] = 'x",status="pass'
    text = render(document)
    assert text.splitlines().count("# EOF") == 1 and text.endswith("\n# EOF\n")  # hostile text stays escaped
    for parser in (openmetrics_families, prometheus_families):
        pythons = {s.labels["python"] for f in parser(text) for s in f.samples}
        assert pythons == {clean(hostile)}
        checks = {s.labels["check"] for f in parser(text) for s in f.samples if "check" in s.labels}
        assert 'x",status="pass' in checks


def test_the_cli_writes_openmetrics_and_diff_and_scan_refuse_it(tmp_path):
    path = FIXTURES / "linux" / "kaggle-cudnn-9.0-vs-9.3.json"
    code, out, err = run_cli(["explain", path, "--format", "openmetrics"])
    assert code == 1 and err == ""
    assert samples(out, openmetrics_families)[("tfdoctor_problems", (("python", ""),))] == 1
    report = write(tmp_path, json.loads(path.read_text()))
    for args in (["diff", report, report, "--format", "openmetrics"], ["scan", tmp_path, "-f", "openmetrics"]):
        code, out, err = run_cli(args)
        assert code == 2 and out == "" and "'openmetrics' is not one of" in err  # the parser refuses it (render/formats.py)
