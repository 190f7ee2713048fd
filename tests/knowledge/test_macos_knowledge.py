"""What the macOS knowledge says, as the checks ask it: the real metal/TF pairings (not Apple's table),
the newest GPU pair per Python, the install candidate per platform, Python and macOS."""

from __future__ import annotations

import pytest

from tfdoctor.facts import installable_wheels, metal_pairing, tensorflow_pins
from tfdoctor.checks import metal_plugin as metal_plugin_check
from tfdoctor.checks import tensorflow_install as tensorflow_install_check


@pytest.mark.parametrize("metal, tf, outcome", [
    ("1.2.0", "2.19.0", "loads"),
    ("1.2.0", "2.18.1", "loads"),
    ("1.1.0", "2.18.0", "import_fails"),   # Apple's table says it works; it does not
    ("1.1.0", "2.19.0", "import_fails"),
    ("1.2.0", "2.20.0", "import_fails"),   # no release loads into TF >= 2.20
    ("1.1.0", "2.21.0", "import_fails"),
    ("1.1.0", "2.17.1", "loads"),
    ("1.1.0", "2.13.1", "loads"),
    ("1.0.0", "2.12.0", "loads"),
    ("0.8.0", "2.11.0", "import_fails"),
    ("0.7.0", "2.11.0", "training_fails"),
    ("0.7.0", "2.10.0", "import_fails"),
    ("0.6.0", "2.9.0", "crashes_in_use"),
    ("0.6.0", "2.10.1", "loads"),
    ("0.5.0", "2.9.2", "loads"),
    ("1.2.0", "2.16.1", "loads_untested"),
])
def test_pairings(metal, tf, outcome):
    assert metal_pairing.metal_pairing(metal, tf)["outcome"] == outcome


def test_unknown_pairing_is_none():
    assert metal_pairing.metal_pairing("0.2.0", "2.8.0") is None


def test_error_texts_are_the_real_ones():
    assert metal_pairing.metal_pairing("1.1.0", "2.18.0")["error"] == "Symbol not found: __ZN3tsl8internal10LogMessageC1EPKcii"
    assert metal_pairing.metal_pairing("1.2.0", "2.20.0")["error"] == "Library not loaded: @rpath/_pywrap_tensorflow_internal.so"


@pytest.mark.parametrize("tf, python, metal", [
    ("2.19.0", "3.12.4", "1.2.0"), ("2.18.0", "3.9.21", "1.2.0"), ("2.15.0", "3.11.1", "1.1.0"),
    ("2.13.0", "3.11.3", "1.0.1"),  # Apple's pairing before the also-working 1.1.0
    ("2.13.0", "3.8.12", "1.0.1"), ("2.10.0", "3.10.18", "0.6.0"), ("2.9.0", "3.10.18", "0.5.0"),
    ("2.20.0", "3.12.4", None), ("2.16.1", "3.12.2", None),  # 1.2.0 with 2.16 is untested, 1.1.0 has no cp312
])
def test_metal_for(tf, python, metal):
    assert metal_pairing.metal_for(tf, python) == metal


def test_metal_needs_macos_12():
    assert metal_pairing.metal_for("2.9.0", "3.9", macos="11.6") is None
    assert metal_pairing.metal_for("2.9.0", "3.9", macos="12.6") == "0.5.0"


@pytest.mark.parametrize("python, macos, combo", [
    ("3.12.1", None, {"tf": "2.19", "tf_name": "tensorflow", "metal": "1.2.0"}),
    ("3.9.18", "14.2", {"tf": "2.19", "tf_name": "tensorflow", "metal": "1.2.0"}),
    ("3.8.12", None, {"tf": "2.13", "tf_name": "tensorflow", "metal": "1.0.1"}),
    ("3.13.0", None, None),
    ("3.8.2", "11.2", None),
])
def test_gpu_combo(python, macos, combo):
    assert metal_pairing.gpu_combo(python, macos) == combo


@pytest.mark.parametrize("platform, python, macos, wanted", [
    ("macos-arm64", "3.8.2", "11.2", ("tensorflow-macos", "2.9.2")),
    ("macos-arm64", "3.11.3", "13.5.1", ("tensorflow", "2.21.0")),
    ("macos-arm64", "3.9.18", None, ("tensorflow", "2.20.0")),   # 2.21 dropped cp39
    ("macos-x86_64", "3.11", None, ("tensorflow", "2.16.2")),
    ("macos-x86_64", "3.13.0", None, None),
    ("linux-x86_64", "3.11.7", None, ("tensorflow", "2.21.0")),
])
def test_newest_installable(platform, python, macos, wanted):
    assert installable_wheels.newest_installable(platform, python, macos) == wanted


def test_shim_direction_flips_at_2_16():
    assert installable_wheels.wheel_for("tensorflow", "2.15.0", "macos-arm64")["shim_of"] == "tensorflow-macos"
    assert installable_wheels.wheel_for("tensorflow-macos", "2.16.2", "macos-arm64")["shim_of"] == "tensorflow"
    assert installable_wheels.wheel_for("tensorflow-macos", "2.15.0", "macos-arm64")["kind"] == "real"
    assert installable_wheels.wheel_for("tensorflow", "2.16.1", "macos-arm64")["kind"] == "real"


def test_numpy_and_keras_pins():
    assert tensorflow_install_check.pin_holds("numpy", "2.15.0", "2.0.0") is False
    assert tensorflow_install_check.pin_holds("numpy", "2.18.0", "2.0.2") is True
    assert tensorflow_install_check.pin_holds("numpy", "2.18.0", "2.1.0") is False
    assert tensorflow_pins.numpy_major_max("2.17.1")["numpy_major_max"] == 1
    assert tensorflow_pins.numpy_major_max("2.18.0") is None
    assert tensorflow_install_check.pin_holds("keras", "2.15.0", "3.0.5") is False
    assert tensorflow_install_check.pin_holds("keras", "2.19.0", "3.9.1") is True
    assert tensorflow_install_check.pin_holds("keras", "2.21.0", "3.11.0") is False


def test_dead_ends_for_x86_64_and_new_pythons():
    assert metal_pairing.newest_x86_64_metal() == "1.0.0"
    assert metal_pairing.newest_metal_python() == "3.12"
    assert metal_plugin_check.no_metal_from_tf() == "2.20"
    assert metal_plugin_check.newest_tf_minor_for_metal("1.1.0") == "2.17"


def test_the_release_table_knows_pypi_flipped_the_shim_at_2_15_1():
    # read from PyPI by tools/refresh_knowledge.py: the hand-kept table had tensorflow-macos real up to 2.15.1
    assert installable_wheels.wheel_for("tensorflow", "2.15.0", "macos-arm64")["kind"] == "shim"
    assert installable_wheels.wheel_for("tensorflow", "2.15.1", "macos-arm64")["kind"] == "real"
    assert installable_wheels.wheel_for("tensorflow-macos", "2.15.1", "macos-arm64")["kind"] == "shim"
