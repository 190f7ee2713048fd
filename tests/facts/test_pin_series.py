"""The release series a pin admits (issue 29, round 3): tfdoctor.facts.requires_dist.admits_series decides whether a
violated pin is another API (Keras 3 under keras<2.14, ml-dtypes 0.2 under ~=0.3.1) or only outside the range."""

from __future__ import annotations

import pytest

from tfdoctor.facts.requires_dist import admits_series, series_of, version_of


@pytest.mark.parametrize("specifier, installed, admitted", [
    ("<2.14,>=2.13.1", "3.1.1", False),   # no 2.x.0 satisfies this pin, yet it admits 2.x, not 3.x
    ("<2.14,>=2.13.1", "2.12.0", True),
    ("~=0.3.1", "0.2.0", False),          # for 0.x, the minor is the series
    ("~=0.3.1", "0.4.0", False),
    ("~=0.3.1", "0.3.0", True),
    ("==0.3.*", "0.2.0", False),
    (">=3.20.3,<5.0.0dev,!=4.21.0", "5.29.0", False),
    (">=3.20.3,<5.0.0dev", "3.19.6", True),
    ("<2.0.0,>=1.26.0", "2.1.0", False),
    (">=3.0.0", "2.15.0", False),
    (">2.15.0", "2.15.0", True),          # 2.15.1 is in the series
])
def test_admits_series(specifier, installed, admitted):
    assert admits_series(specifier, installed) is admitted


def test_unreadable_input_is_unknown_and_series_are_named():
    assert admits_series("not a specifier", "1.0") is None and admits_series(">=1", "garbage") is None
    assert series_of(version_of("3.1.1")) == "3.x" and series_of(version_of("0.2.0")) == "0.2.x"
