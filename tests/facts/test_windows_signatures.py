"""Windows failure signatures from 2024-2026 threads (issue 29, part 5): the DLL initialization failure of
TensorFlow's native library, matched in each thread's own words and turned into advice that names the two
causes the maintainers give (the Visual C++ runtime, a CPU without AVX), with no pip step that cannot help."""

from __future__ import annotations

import pytest

from tfdoctor.facts import signatures
from tfdoctor.report.run import RunReport
from tfdoctor.checking.runner import run_checks
from tfdoctor.checking.registry import all_checks

from tests.builders import check_result, distribution, fix_text, host

RUNTIME_TAIL = ("\n\n\nFailed to load the native TensorFlow runtime.\nSee https://www.tensorflow.org/install/errors for "
                "some common causes and solutions.\nIf you need help, create an issue at "
                "https://github.com/tensorflow/tensorflow/issues and include the entire stack trace above this error message.")
DLL_INIT = ("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: A dynamic link library (DLL) "
            "initialization routine failed.")

# The failing frame and the error, verbatim, as each thread shows them.
THREADS = {
    "https://github.com/tensorflow/tensorflow/issues/74725":
        '  File "C:\\Users\\SALMAN  KHAN\\Desktop\\Python_version_2\\myenv\\Lib\\site-packages\\tensorflow\\python\\'
        'pywrap_tensorflow.py", line 70, in <module>\n    from tensorflow.python._pywrap_tensorflow_internal import *\n' + DLL_INIT,
    "https://github.com/tensorflow/tensorflow/issues/77150":
        '  File "c:\\\\Users\\\\OWNER\\\\anaconda3\\\\envs\\\\tf_env\\\\lib\\\\site-packages\\\\tensorflow\\\\python\\\\'
        'pywrap_tensorflow.py", line 62, in <module>\n    from tensorflow.python._pywrap_tensorflow_internal import *\n'
        + DLL_INIT + "\n\nFailed to load the native TensorFlow runtime.",
    "https://github.com/tensorflow/tensorflow/issues/79609":
        '  File "C:\\Users\\uneeb\\PycharmProjects\\pythonProject5\\venv\\lib\\site-packages\\tensorflow\\python\\'
        'pywrap_tensorflow.py", line 70, in <module>\n    from tensorflow.python._pywrap_tensorflow_internal import *\n' + DLL_INIT,
    "https://github.com/tensorflow/tensorflow/issues/89083":
        '  File "C:\\Users\\ray_v\\PycharmProjects\\pythonProject\\.venv1\\Lib\\site-packages\\tensorflow\\python\\'
        'pywrap_tensorflow.py", line 73, in <module>\n    from tensorflow.python._pywrap_tensorflow_internal import *\n' + DLL_INIT,
    "https://github.com/tensorflow/tensorflow/issues/89297":
        '  File "C:\\Users\\ACER\\AppData\\Local\\Packages\\PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\\LocalCache\\'
        'local-packages\\Python311\\site-packages\\tensorflow\\python\\pywrap_tensorflow.py", line 73, in <module>\n'
        "    from tensorflow.python._pywrap_tensorflow_internal import *\n" + DLL_INIT + RUNTIME_TAIL,
    "https://github.com/tensorflow/tensorflow/issues/91321":
        "File ~\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\tensorflow\\python\\pywrap_tensorflow.py:73\n"
        "     72 try:\n---> 73   from tensorflow.python._pywrap_tensorflow_internal import *\n" + DLL_INIT,
    "https://github.com/tensorflow/tensorflow/issues/77089": DLL_INIT + "\n\nDuring handling of the above exception, another exception occurred:",
}


@pytest.mark.parametrize("url", sorted(THREADS))
def test_each_threads_text_is_the_dll_initialization_failure(url):
    found = signatures.match_text(THREADS[url], phases=("import",))
    assert found and found[0].signature.id == "windows-dll-initialization-failed", url
    assert "initialization routine failed" in found[0].evidence


def test_a_missing_dll_is_not_an_initialization_failure():
    """'The specified module could not be found' is a DLL that is not there: another cause, another fix."""
    text = ("ImportError: DLL load failed while importing _pywrap_tensorflow_internal: "
            "The specified module could not be found.")
    assert "windows-dll-initialization-failed" not in [m.signature.id for m in signatures.match_text(text)]


def _windows_facts(cpu_flags=None) -> dict:
    facts = {"host": host("Windows", "AMD64"), "python": {"version": "3.11.9", "machine": "AMD64", "in_venv": True},
             "distributions": [distribution("tensorflow", "2.19.0")],
             "tensorflow": {"status": "import_error", "imported": False, "exit_code": 1, "signal": None,
                            "timed_out": False, "stderr_tail": "", "version": None, "devices": None,
                            "exception": {"type": "ImportError", "message": "Traceback (most recent call last):\n"
                                          + THREADS["https://github.com/tensorflow/tensorflow/issues/89083"] + RUNTIME_TAIL,
                                          "causes": [{"type": "ImportError", "message": DLL_INIT.split(": ", 1)[1]}]}}}
    if cpu_flags is not None:
        facts["cpu"] = {"flags": cpu_flags}
    return facts


def test_the_import_check_names_the_runtime_and_the_cpu_and_plans_no_reinstall():
    facts = _windows_facts()
    result = check_result("tensorflow-import", facts)
    assert result.status.value == "fail"
    assert result.evidence["signatures"][0] == "windows-dll-initialization-failed"
    assert "Visual C++" in result.summary
    text = fix_text(result)
    assert "https://aka.ms/vs/17/release/vc_redist.x64.exe" in text and "AVX" in text
    assert not result.remediation.repairs, "reinstalling TensorFlow cannot repair a runtime or a CPU"
    plan = RunReport(facts, run_checks(all_checks(), facts)).plan
    assert not [step for step in plan.steps if "tensorflow-import" in plan_checks(step)]


def plan_checks(step) -> set[str]:
    return {reason.check for reason in step.reasons}


def test_without_avx_the_cpu_check_says_so_beside_the_signature():
    """When the CPU's flags are recorded, cpu-instructions tells which of the two causes it is."""
    facts = _windows_facts(cpu_flags=["sse4_2", "popcnt"])
    assert check_result("cpu-instructions", facts).status.value == "fail"
    assert check_result("tensorflow-import", facts).evidence["signatures"][0] == "windows-dll-initialization-failed"


# ------------------------------------------------------------------------------- Windows' path limit

PIP_HINT = ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: \n"
            "HINT: This error might have occurred since this system does not have Windows Long Path support enabled. "
            "You can find information on how to enable this at https://pip.pypa.io/warnings/enable-long-paths")
PIP_51841 = ("Installing collected packages: tensorflow\nERROR: Could not install packages due to an OSError: [Errno 2] \n"
             "No such file or directory: 'E:\\\\Pathik\\\\KJ\\\\internships\\\\Facial Expression recognition\\\\Github Repo\\\\"
             "Emotion-recognition\\\\venv\\\\Lib\\\\sitepackages\\\\tensorflow\\\\include\\\\external\\\\cudnn_frontend_archive\\\\"
             "_virtual_includes\\\\cudnn_frontend\\\\third_party\\\\cudnn_frontend\\\\include\\\\cudnn_frontend_EngineConfigGenerator.h'")


@pytest.mark.parametrize("text", [PIP_HINT, PIP_51841, "OSError: [WinError 206] The filename or extension is too long"])
def test_pips_long_path_errors_are_the_long_path_limit(text):
    found = signatures.match_text(text, phases=("install",))
    assert found and found[0].signature.id == "windows-long-path-limit"
    assert "LongPathsEnabled" in found[0].signature.advice and found[0].signature.url.startswith("https://pip.pypa.io/")


def test_a_short_missing_file_is_not_the_path_limit_and_install_rows_stay_out_of_imports():
    short = "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\tf\\\\a.h'"
    assert signatures.match_text(short, phases=("install",)) == []
    assert signatures.match_text(PIP_HINT, phases=("import", "gpu", "probe")) == []


def _not_installed(site: str, long_paths) -> dict:
    windows = {"release": "11", "version": "10.0.22631", "edition": "Professional"}
    if long_paths is not ...:
        windows["long_paths_enabled"] = long_paths
    return {"host": host("Windows", "AMD64"), "os": {"windows": windows},
            "python": {"version": "3.12.7", "machine": "AMD64", "in_venv": True, "site_packages": [site.rsplit("\\Lib", 1)[0], site]},
            "distributions": []}


# 51841's venv: 108 characters to site-packages, 266 with TensorFlow's deepest file
LONG_SITE = "E:\\Pathik\\KJ\\internships\\Facial Expression recognition\\Github Repo\\Emotion-recognition\\venv\\Lib\\site-packages"


def test_before_installing_into_a_deep_folder_the_install_check_says_to_enable_long_paths():
    from checks.tensorflow_install import ENABLE_LONG_PATHS

    facts = _not_installed(LONG_SITE, False)
    result = check_result("tensorflow-install", facts)
    assert result.status.value == "fail" and result.evidence["long_path_needed"] == len(LONG_SITE) + 1 + 157
    assert ENABLE_LONG_PATHS in result.remediation.commands
    assert "LongPathsEnabled" in result.remediation.advice and "C:\\tf" in result.remediation.advice
    assert any("259" in line for line in result.details)
    plan = RunReport(facts, run_checks(all_checks(), facts)).plan
    assert any("tensorflow" in step.command and "install" in step.command for step in plan.steps), "still installs it"


@pytest.mark.parametrize("site, long_paths", [
    ("C:\\tf\\Lib\\site-packages", False),  # short enough for the deepest file
    (LONG_SITE, True),                        # long paths on
    (LONG_SITE, None),                        # not readable
    (LONG_SITE, ...),                         # not recorded (an older report)
])
def test_no_long_path_step_where_the_install_fits_or_nothing_is_known(site, long_paths):
    result = check_result("tensorflow-install", _not_installed(site, long_paths))
    assert result.status.value == "fail"
    assert "long_path_needed" not in result.evidence and "LongPathsEnabled" not in fix_text(result)
