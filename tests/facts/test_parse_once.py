"""Issue 36: Requires-Dist lines are parsed once, not once per distribution that asks about them: the work of
judging the pins grows with the number of lines, not with its square (15,191 parses of 65 distributions' lines
in one run before)."""

from __future__ import annotations

from packaging.requirements import Requirement

from tfdoctor.facts import requires_dist
from tfdoctor.knowledge import specifiers

from tests.builders import ENV_SITE, tensorflow_environment


def _facts(count: int) -> dict:
    """tensorflow-cpu beside `count` distributions, each requiring the next two and, one in ten, TensorFlow under an
    extra another distribution asks for (the case that made every distribution read every other one's lines)."""
    facts = tensorflow_environment()
    extra = []
    for index in range(count):
        requires = [f"pkg-{(index + 1) % count}>=1.0", f"pkg-{(index + 2) % count}; python_version >= '3'"]
        if index % 10 == 0:
            requires += ["tensorflow-cpu>=2.0; extra == 'tf'", f"pkg-{(index + 3) % count}[tf]"]
        extra.append({"name": f"pkg-{index}", "version": "1.0", "location": ENV_SITE, "top_level": [f"pkg_{index}"],
                      "requires": requires, "has_record": True})
    facts["distributions"] = [*facts["distributions"], *extra]
    return facts


def _parses(monkeypatch, facts: dict) -> int:
    made = []

    class Counting(Requirement):
        def __init__(self, text: str) -> None:
            made.append(text)
            super().__init__(text)

    forget = getattr(specifiers.parse_requirement, "cache_clear", lambda: None)  # however parse remembers, start afresh
    forget()
    monkeypatch.setattr(specifiers, "Requirement", Counting)
    requires_dist.unmet_requirements(facts)
    requires_dist.closure_members(facts)
    requires_dist.unmet_requirements(facts)  # a second check asking again parses nothing
    forget()  # the counting class must not outlive the test in a cache
    return len(made)


def test_each_line_is_parsed_once_whatever_the_number_of_distributions(monkeypatch):
    for count in (50, 200):
        facts = _facts(count)
        lines = {line for entry in facts["distributions"] for line in entry.get("requires") or ()}
        assert _parses(monkeypatch, facts) <= len(lines)


def test_the_verdict_is_the_same_with_the_lines_parsed_once(monkeypatch):
    facts = _facts(30)
    facts["distributions"].append({"name": "needs-new-numpy", "version": "1.0", "location": ENV_SITE,
                                   "top_level": ["needs_new_numpy"], "requires": ["numpy>=99", "tensorflow-cpu"],
                                   "has_record": True})
    first = requires_dist.unmet_requirements(facts)
    again = requires_dist.unmet_requirements(facts)
    assert first == again
    assert [(u.requirer, u.name) for u in first if u.requirer == "needs-new-numpy"] == [("needs-new-numpy", "numpy")]


def test_the_name_read_without_parsing_is_the_one_parsing_gives():
    lines = ["numpy>=1.26", "  Tensorflow_CPU[and-cuda] (>=2.16) ; extra == 'x'", "tf-keras~=2.16.0",
             "foo.bar-baz_1 @ https://example.org/x.whl", "a", "pkg-; python_version > '3'", "protobuf!=4.21.0,<6",
             "ml_dtypes ; sys_platform == 'linux'", "\tkeras>=3"]
    for line in lines:
        parsed = specifiers.parse_requirement(line)
        if parsed is not None:
            assert specifiers.requirement_name(line) == parsed.name, line
    assert specifiers.requirement_name(">=1.0") is None
    assert specifiers.requirement_name("") is None


def test_an_empty_plan_is_closed_without_parsing_every_line(monkeypatch):
    """The plan's closure asks only about the distributions a plan changes: an empty plan parses no Requires-Dist
    line (it parsed all 15,199 of 5,000 distributions before)."""
    from tfdoctor.plan import closure

    facts = _facts(200)
    made = []

    class Counting(Requirement):
        def __init__(self, text: str) -> None:
            made.append(text)
            super().__init__(text)

    specifiers.parse_requirement.cache_clear()
    monkeypatch.setattr(specifiers, "Requirement", Counting)
    try:
        gaps = closure.gaps({"steps": [], "conflicts": []}, facts)
    finally:
        specifiers.parse_requirement.cache_clear()
    assert gaps == []
    assert not [line for line in made if line.startswith("pkg-")]
