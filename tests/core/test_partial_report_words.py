"""A saved report that records little (a thread pasted into a report: no versions, no machine) is judged in words a
reader can use: no check prints a Python None, an empty version or a '?' where the report did not record a fact."""

from __future__ import annotations

import re

import pytest

from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks

UNRECORDED = re.compile(r"\bNone\b|Python  |TensorFlow \? |\bCUDA None\b")

_IMPORTED = {"status": "ok", "imported": True, "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"}]}


@pytest.mark.parametrize("facts", [
    {"host": {"system": "Linux"}, "distributions": [{"name": "tensorflow", "version": "2.15.0"}]},
    {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"machine": "x86_64"}, "distributions": [],
     "tensorflow": {**_IMPORTED, "version": None}},
    {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"machine": "x86_64"},
     "distributions": [{"name": "tensorflow", "version": "2.16.1"}, {"name": "numpy", "version": "1.26.4"}],
     "tensorflow": {**_IMPORTED, "version": "2.16.1"}},
    {"host": {"system": "Darwin", "machine": "arm64"}, "python": {"machine": "x86_64"},
     "distributions": [{"name": "tensorflow-macos", "version": "2.9.2"}]},
], ids=["linux-without-machine", "imported-without-version", "no-python-version", "mac-without-sysctl"])
def test_checks_name_what_a_partial_report_did_not_record(facts):
    for result in run_checks(all_checks(), facts):
        for text in (result.summary, *result.details):
            assert not UNRECORDED.search(text), f"{result.check_id}: {text}"
