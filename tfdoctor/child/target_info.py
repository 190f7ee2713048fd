''''exit 64 # '''
# ^ A no-op string in Python; in a POSIX shell it runs `exit 64`, so `--python /bin/sh` exits at once
# instead of running this file as shell commands (`import json` is ImageMagick's `import` there).
#
# Describes the interpreter that runs it: version, architecture, Rosetta, environment kind, its PEP 508
# marker environment, and the installed distributions the checks need (read from metadata, never
# imported). Standard library only; prints JSON. Run as `python -c <this source> [working directory]`, from
# an empty directory of the doctor's: the user's project folder (the argument) is read, never imported from.
import sys

# What the interpreter imported before any code of the user's runs (site, the .pth lines, the encodings): a
# file of the project folder named like one of these cannot take its place. Read before anything else here.
STARTUP_MODULES = frozenset(sys.modules)

import binascii
import functools
import json
import os
import platform
import re
import site
import struct
import sysconfig
from importlib import machinery, util as importlib_util  # here, not later: never from the project folder

# The folder the user's `python script.py` runs from (the doctor's working directory), and this child's own
# empty one, where what the interpreter made of '' and of relative PYTHONPATH items points.
WORKING_DIRECTORY = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else os.getcwd()
CHILD_DIRECTORY = os.getcwd()

# Distributions whose files matter to the diagnosis: for these the Requires-Dist lines, the top-level
# names they install and the native libraries they ship are recorded. The TensorFlow family, and every
# distribution that requires one of them, are added to these (FAMILY, describe_distributions()).
DETAILED_PREFIXES = ("tensorflow", "tf-nightly", "tf-keras", "keras", "numpy", "ml-dtypes", "nvidia-", "protobuf",
                     "intel-tensorflow", "tensorboard", "tb-nightly")
# Recorded with name and version even when no requirement names them: checks read them (cuda-build:
# PyTorch's own cuDNN pin fights TensorFlow's in one environment; companions: whether a library without
# TensorFlow code has another framework to run on, jax and flax too).
ALSO_RECORDED = ("torch", "jax", "flax") + ("transformers",)
# Libraries whose earlier releases shipped TensorFlow code and whose newest do not (transformers 5 removed its
# TensorFlow classes, and its Requires-Dist no longer names TensorFlow): recorded with their metadata's path, so
# the collector reads what the installed release's own files import (tfdoctor/collect/library_imports.py).
READ_LIBRARIES = ("transformers",)
# Family names (canonical): tfdoctor/facts/requires_dist.py FAMILY says the same for the checks.
FAMILY = re.compile(r"^(tensorflow(-.+)?|tf-nightly(-.+)?|intel-tensorflow(-.+)?|keras|keras-nightly|tf-keras|"
                    r"tf-keras-nightly|tensorboard|tb-nightly|ml-dtypes)$")
# A Requires-Dist header that may name a family member: a cheap test on the raw METADATA header block,
# so the other thousands of distributions cost one small read each and nothing more.
MAY_NAME_FAMILY = re.compile(br"^Requires-Dist:[ \t]*(tensorflow|tf[-_.]|intel[-_.]tensorflow|keras|tensorboard|tb[-_.]nightly|"
                             br"ml[-_.]dtypes)", re.I | re.M)
REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
NAME_HEADER = re.compile(br"^Name:[ \t]*([^\r\n]*)", re.I | re.M)
VERSION_HEADER = re.compile(br"^Version:[ \t]*([^\r\n]*)", re.I | re.M)
REQUIRES_HEADER = re.compile(br"^Requires-Dist:[ \t]*([^\r\n]*)", re.I | re.M)
WHEEL_TAG = re.compile(br"^Tag:[ \t]*([^\r\n]*)", re.I | re.M)


SEPARATORS = re.compile(r"[-_.]+")


@functools.lru_cache(maxsize=None)
def canonical(name):
    """PEP 503 normalisation: 'TensorFlow_Metal' -> 'tensorflow-metal' (each name once: with 5,000 distributions
    it was asked 51,000 times)."""
    return SEPARATORS.sub("-", name).lower()


def proc_translated():
    """sysctl.proc_translated of *this* process: 1 under Rosetta, 0 native, None if the key is unknown."""
    if sys.platform != "darwin":
        return None
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        value = ctypes.c_int(0)
        size = ctypes.c_size_t(ctypes.sizeof(value))
        if libc.sysctlbyname(b"sysctl.proc_translated", ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)) != 0:
            return None  # ENOENT on Intel Macs
        return str(value.value)
    except Exception:
        return None


def macho_header(path):
    """The first bytes of a Mach-O file as hex: the magic and every architecture slice's cputype
    (read by tfdoctor/facts/mach_o.py). Thin files: 16 bytes; universal ones: the whole fat header."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
            if head[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf") and len(head) == 8:
                count = struct.unpack(">I", head[4:8])[0]
                size = 32 if head[3:4] == b"\xbf" else 20
                head += handle.read(min(count, 16) * size)
            else:
                head += handle.read(8)
    except (OSError, IOError):
        return None
    return binascii.hexlify(head).decode("ascii") if head else None


def executable_macho():
    if sys.platform != "darwin":
        return None
    path = os.path.realpath(sys.executable)
    return {"path": path, "header_hex": macho_header(path)}


def tensorflow_plugin_dirs():
    """Every tensorflow-plugins directory `import tensorflow` would load, found the way TF's own
    __init__.py looks (user site, sys.path entries containing 'site-packages', site.getsitepackages()),
    with the native libraries in each. Two copies of one plugin register its platform twice."""
    candidates = []
    if site.ENABLE_USER_SITE and hasattr(site, "getusersitepackages"):
        candidates.append(site.getusersitepackages())
    candidates.extend(p for p in sys.path if p and "site-packages" in p)
    if hasattr(site, "getsitepackages"):
        candidates.extend(site.getsitepackages())
    found, seen = [], set()
    for base in candidates:
        plugin_dir = os.path.join(base, "tensorflow-plugins")
        real = os.path.realpath(plugin_dir)
        if real in seen or not os.path.isdir(plugin_dir):
            continue
        seen.add(real)
        files = []
        try:
            names = sorted(os.listdir(plugin_dir))
        except OSError:
            names = []
        for name in names:
            if name.endswith((".dylib", ".so", ".dll")):
                header = macho_header(os.path.join(plugin_dir, name)) if sys.platform == "darwin" else None
                files.append({"name": name, "header_hex": header})
        found.append({"path": plugin_dir, "files": files})
    return found


def pyvenv_cfg():
    path = os.path.join(sys.prefix, "pyvenv.cfg")
    values = {}
    try:
        with open(path) as handle:
            for line in handle:
                if "=" in line:
                    key, _, value = line.partition("=")
                    values[key.strip()] = value.strip()
    except OSError:
        return None
    return values


def pixi_environment():
    """conda-meta/pixi, the file pixi writes into every environment it installs (its manifest path, the
    environment's name, pixi's version: https://pixi.sh/latest/workspace/environment/ "Environment
    Installation Metadata"); None where there is none. Only those short strings are kept."""
    try:
        with open(os.path.join(sys.prefix, "conda-meta", "pixi"), encoding="utf-8") as handle:
            data = json.loads(handle.read(64 * 1024))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return dict((key, data[key][:4096]) for key in ("manifest_path", "environment_name", "pixi_version")
                if isinstance(data.get(key), str))


def installer_markers():
    """What tells the environment's installer apart (tfdoctor/environment/installers/ reads it): recorded in
    facts["python"] by the doctor, and asked alone by `tfdoctor fix --undo` (fixer/flow.py probe), so both
    detect alike."""
    cfg = pyvenv_cfg()
    stdlib = sysconfig.get_path("stdlib") or ""
    return {
        "in_venv": getattr(sys, "base_prefix", sys.prefix) != sys.prefix,
        "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
        "uv_version": (cfg or {}).get("uv"),
        "externally_managed": bool(stdlib) and os.path.exists(os.path.join(stdlib, "EXTERNALLY-MANAGED")),
        "pixi": pixi_environment(),
    }


def describe_python():
    try:
        site_packages = site.getsitepackages()
    except AttributeError:  # old virtualenv's site.py
        site_packages = []
    description = {
        "executable": sys.executable,
        "real_executable": os.path.realpath(sys.executable),
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "pointer_bits": 64 if sys.maxsize > 2 ** 32 else 32,
        "mac_ver": platform.mac_ver()[0] or None,
        "libc": list(platform.libc_ver()) if sys.platform.startswith("linux") else None,
        "proc_translated": proc_translated(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "site_packages": site_packages,
        "user_site": site.getusersitepackages() if hasattr(site, "getusersitepackages") else None,
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
        "sys_path": [p for p in sys.path if p],
        # Added for the macOS checks: the build banner names Anaconda / conda-forge builds, the
        # executable's Mach-O header says thin x86_64 vs universal2, and the plugin directories
        # are where a second tensorflow-metal copy hides.
        "sys_version": " ".join(sys.version.split()),
        # what a wheel's ABI tag names besides the version: 'd' debug, 't' free-threaded (PEP 3149, PEP 703)
        "abiflags": getattr(sys, "abiflags", None),
        "executable_macho": executable_macho(),
        "tensorflow_plugin_dirs": tensorflow_plugin_dirs(),
        "marker_environment": marker_environment(),
    }
    description.update(installer_markers())
    return description


def marker_environment():
    """PEP 508's environment markers as this interpreter evaluates them (the reference implementation in
    PEP 508, the one `packaging` uses): Requires-Dist markers are decided for the target, not the doctor."""
    implementation = getattr(sys, "implementation", None)
    if implementation is not None:
        info = implementation.version
        version = "{0}.{1}.{2}".format(info.major, info.minor, info.micro)
        if info.releaselevel != "final":
            version += info.releaselevel[0] + str(info.serial)
        name = implementation.name
    else:
        version, name = "0", ""
    return {
        "implementation_name": name,
        "implementation_version": version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def read_header_block(path):
    """The header lines of a METADATA / PKG-INFO file (up to the first blank line), as bytes: never the
    long description after it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(8192)
            while True:
                end = data.find(b"\n\n")
                if end < 0 and b"\r" in data:
                    end = data.find(b"\r\n\r\n")
                if end >= 0:
                    return data[:end]
                chunk = handle.read(65536)
                if not chunk:
                    return data
                data += chunk
    except (OSError, IOError):
        return None


def header(pattern, block):
    match = pattern.search(block)
    return match.group(1).strip().decode("utf-8", "replace") if match else None


def split_info_name(entry_name):
    """('name', 'version') from 'name-version.dist-info' or 'name-version-py3.9.egg-info'."""
    stem = entry_name.rsplit(".", 1)[0]
    if entry_name.endswith(".egg-info"):
        parts = stem.split("-")
        return parts[0], (parts[1] if len(parts) > 1 else None)
    name, sep, version = stem.rpartition("-")
    return (name, version) if sep else (stem, None)


def project_path(path):
    """A sys.path entry as the user's own `python` run from the working directory has it: '' is that folder,
    and what relative PYTHONPATH items became in this child's empty directory lies under it there."""
    if path == "":
        return WORKING_DIRECTORY
    if WORKING_DIRECTORY != CHILD_DIRECTORY and (path == CHILD_DIRECTORY or path.startswith(CHILD_DIRECTORY + os.sep)):
        return WORKING_DIRECTORY + path[len(CHILD_DIRECTORY):]
    return path


def scan_path_entries():
    """(location as recorded, file name, directory) of every *.dist-info / *.egg-info in sys.path order (what
    importlib.metadata.distributions() yields; '' is the working directory, recorded as '.'), each path
    entry once."""
    found, seen = [], set()
    for entry in sys.path:
        directory = project_path(entry)
        base = "." if entry == "" else directory
        try:
            real = os.path.realpath(directory)
            if real in seen or not os.path.isdir(directory):
                continue
            seen.add(real)
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                found.append((base, name, directory))
    return found


def egg_requires(info_path):
    """Requires-Dist lines of an .egg-info (requires.txt), through importlib.metadata where it exists."""
    try:
        import pathlib
        from importlib import metadata
        return list(metadata.PathDistribution(pathlib.Path(info_path)).requires or ())
    except Exception:  # Python < 3.8, or an unreadable requires.txt
        return []


def listed_names(info_path):
    """The names in a .dist-info / .egg-info directory, lower-cased; None when it cannot be listed. A file whose
    name is not there, in any case, cannot be opened on any filesystem: one listing spares the failing opens
    (top_level.txt is missing from most wheels' dist-info: 5,000 failed opens with 5,000 distributions)."""
    try:
        return frozenset(name.lower() for name in os.listdir(info_path))
    except OSError:
        return None


def may_exist(listed, name):
    return listed is None or name.lower() in listed


def read_record(info_path, listed=None):
    """The paths a distribution installed, from RECORD read as CSV (installed-files.txt for old eggs)."""
    if not may_exist(listed, "RECORD"):
        return []
    try:
        with open(os.path.join(info_path, "RECORD"), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except (OSError, IOError):
        text = None
    if text is None:
        return []
    if '"' in text:
        import csv
        return [row[0] for row in csv.reader(text.splitlines()) if row]
    return [line.split(",", 1)[0] for line in text.splitlines() if line]


def top_level_names(paths):
    names = set()
    for path in paths:
        parts = path.replace("\\", "/").split("/")
        head = parts[0]
        if head.endswith(".data") and len(parts) > 2:  # wheel data dirs: name.data/purelib/pkg/...
            head = parts[2]
        if head.endswith((".dist-info", ".egg-info", ".pth")) or head in ("..", "", "__pycache__"):
            continue
        names.add(head[:-3] if head.endswith(".py") else head)
    return sorted(names)


def top_level_of(info_path, listed=None):
    """top_level.txt when the build wrote one (cheap), else the heads of RECORD's paths."""
    if may_exist(listed, "top_level.txt"):
        try:
            with open(os.path.join(info_path, "top_level.txt"), encoding="utf-8", errors="replace") as handle:
                names = sorted({line.strip().split("/")[0] for line in handle if line.strip()})
            if names:
                return names
        except (OSError, IOError):
            pass
    return top_level_names(read_record(info_path, listed))


# An extension module of the interpreter's C API: what makes a wheel's interpreter/ABI tag matter (bundled
# libraries, libfoo.so.1, do not count; macOS extension modules end in .so too).
EXTENSION_SUFFIXES = (".so", ".pyd")


def compiled_wheel_tags(info_path, paths):
    """The WHEEL `Tag:` lines of a dist-info, or None when there is no WHEEL, when every tag is pure Python
    (`py3-none-any`: nothing there is bound to an interpreter), or when `paths` (its RECORD, already read) lists no
    extension module: one small read for each detailed distribution that ships one (the family, its dependents,
    NumPy, protobuf, nvidia-*), never for the thousands of others."""
    if not any(path.endswith(EXTENSION_SUFFIXES) for path in paths):
        return None
    try:
        with open(os.path.join(info_path, "WHEEL"), "rb") as handle:
            block = handle.read(4096)
    except (OSError, IOError):
        return None
    tags = [tag.strip().decode("utf-8", "replace") for tag in WHEEL_TAG.findall(block)]
    if not tags or all(tag.endswith("-none-any") for tag in tags):
        return None
    return tags


def native_libraries(location, paths):
    return [os.path.join(location, path) for path in paths
            if path.endswith((".dylib", ".so")) and "tensorflow-plugins" in path]


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (OSError, IOError):
        return None


def import_closure(scanned):
    """Names reachable from the TensorFlow family and its dependents through Requires-Dist lines
    (issue 29: the whole closure `pip check` judges). Markers are left to the checks, which evaluate
    them for this interpreter; of the lines of an extra only TensorFlow's `and-cuda` is followed (nobody
    asks for optree[docs] or ml-dtypes[dev] to import TensorFlow). Over-approximate by design: a name recorded is a name judged."""
    requires_of = {}
    for key, _, _, _, requires, _ in scanned:
        requires_of.setdefault(key, requires)
    # the doctor's own `tensorflow` extra is not the user's stack (facts/requires_dist.py skips it too)
    reached = [key for key, _, _, _, _, requirer in scanned if requirer and key != "tfdoctor"]
    closure = set(reached)
    while reached:
        key = reached.pop()
        for line in requires_of.get(key) or ():
            marker = line.partition(";")[2]
            if "extra" in marker and "and-cuda" not in marker and "and_cuda" not in marker:
                continue
            match = REQUIREMENT_NAME.match(line)
            name = canonical(match.group(1)) if match else None
            if name and name in requires_of and name not in closure:
                closure.add(name)
                reached.append(name)
    return closure


def describe_distributions():
    """(recorded distributions, how many are installed). Every distribution's METADATA header block is
    read (a few kB, never the description), but only what the checks need is recorded: the TensorFlow
    family and every distribution requiring one of them with their Requires-Dist lines, files' top-level
    names and installer; every distribution TensorFlow's Requires-Dist closure reaches with its own
    Requires-Dist lines, top-level names and whether it has a RECORD (pip cannot uninstall one without);
    the distributions those lines name with their versions; NumPy, protobuf and the nvidia-* libraries in
    detail. Entries keep sys.path order (the first copy is the one imported)."""
    scanned = []
    for base, entry_name, directory in scan_path_entries():
        info_path = os.path.join(directory, entry_name)
        egg = entry_name.endswith(".egg-info")
        metadata_path = info_path if egg and os.path.isfile(info_path) else \
            os.path.join(info_path, "PKG-INFO" if egg else "METADATA")
        block = read_header_block(metadata_path)
        if block is None:
            continue
        name = header(NAME_HEADER, block) or split_info_name(entry_name)[0]
        version = header(VERSION_HEADER, block) or split_info_name(entry_name)[1]
        if not name:
            continue
        key = canonical(name)
        # every header block's Requires-Dist lines: the closure needs them (a regex on a few kB each)
        requires = [line.strip().decode("utf-8", "replace") for line in REQUIRES_HEADER.findall(block)]
        from_block = True
        if egg and not requires and os.path.isdir(info_path):
            requires, from_block = egg_requires(info_path), False
        # the cheap test on the block first: of 5,000 distributions a few dozen may name the family, and only their
        # lines are matched name by name (that matching was a tenth of the child's time under cProfile, 5,000 fakes)
        dependent = (not from_block or MAY_NAME_FAMILY.search(block) is not None) and any(
            FAMILY.match(canonical(match.group(1))) for match in map(REQUIREMENT_NAME.match, requires) if match)
        scanned.append((key, version, base, info_path, requires, FAMILY.match(key) is not None or dependent))
    closure = import_closure(scanned)
    named = set()
    for key, _, _, _, requires, requirer in scanned:
        if requirer or key in closure:
            named.update(canonical(m.group(1)) for m in map(REQUIREMENT_NAME.match, requires) if m)
    found = []
    for key, version, base, info_path, requires, requirer in scanned:
        detailed = requirer or key.startswith(DETAILED_PREFIXES)
        if not (detailed or key in named or key in ALSO_RECORDED or key in closure):
            continue
        entry = {"name": key, "version": version, "location": base}
        is_dir = os.path.isdir(info_path)
        listed = listed_names(info_path) if is_dir else None
        if detailed:
            installer = read_text(os.path.join(info_path, "INSTALLER")) if is_dir and may_exist(listed, "INSTALLER") \
                else None
            paths = read_record(info_path, listed) if is_dir else []
            entry.update({
                "installer": installer.strip() if installer else None,
                "requires": list(requires),
                "top_level": top_level_names(paths),
                "plugin_libraries": native_libraries(base, paths),
            })
            tags = compiled_wheel_tags(info_path, paths)
            if tags:
                entry["wheel_tags"] = tags
        elif key in closure:
            # no WHEEL read here: on a closure of thousands it cost +0.6 s CPU (bench/bench_distributions.py); the
            # integrity child records the tags of TensorFlow's own requirements (installers.wheels) anyway
            installer = read_text(os.path.join(info_path, "INSTALLER")) if is_dir and may_exist(listed, "INSTALLER") \
                else None
            entry.update({"installer": installer.strip() if installer else None, "requires": list(requires),
                          "top_level": top_level_of(info_path, listed) if is_dir else []})
        elif is_dir:
            entry["top_level"] = top_level_of(info_path, listed)
        if detailed or key in READ_LIBRARIES:
            # where collect/library_imports.py finds the RECORD of a library it reads (no check reads it; not
            # recorded for the rest of the closure, a fifth of a report with thousands of distributions)
            entry["metadata_path"] = info_path
        if key in closure or detailed:
            # what pip needs to uninstall it: RECORD, or installed-files.txt for an egg-info pip wrote
            entry["has_record"] = any(may_exist(listed, name) and os.path.isfile(os.path.join(info_path, name))
                                      for name in ("RECORD", "installed-files.txt"))
        found.append(entry)
    return found, len(scanned)


# ---------------------------------------------------------------------------------------------------
# What the user's code imports under the names TensorFlow's stack is imported by (issue 19). This child
# runs as `python -c`, so its sys.path is the one `python script.py` run from the working directory has:
# the folder first ('' here, the script's folder there; read at WORKING_DIRECTORY), PYTHONPATH, the site
# directories and what their .pth files add. Each module is located without being imported; so are the
# files of the working directory named like a module of the standard library (issue 35).

RESOLVED_MODULES = ("tensorflow", "keras", "numpy", "google.protobuf", "ml_dtypes")
# Shell start-up files that commonly export PYTHONPATH, under the home directory.
SHELL_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
               ".config/fish/config.fish")
SHELL_LINE_LIMIT = 10
SHELL_READ_BYTES = 256 * 1024
OTHER_COPIES_LIMIT = 5


def normalized(path):
    """One spelling per directory: '' is the working directory; symbolic links resolved."""
    return os.path.normcase(os.path.realpath(project_path(path)))


def installation_site_dirs():
    """The installation's own site-packages (a venv's, conda's, the system's dist-packages): where its
    installer puts distributions. The user site is not one of them."""
    found = []
    try:
        found.extend(site.getsitepackages())
    except AttributeError:  # old virtualenv's site.py
        pass
    for key in ("purelib", "platlib"):
        path = sysconfig.get_path(key)
        if path:
            found.append(path)
    return list(dict.fromkeys(found))


def user_site_dir():
    if not site.ENABLE_USER_SITE or not hasattr(site, "getusersitepackages"):
        return None
    return site.getusersitepackages()


def pth_lines(directories):
    """normalized path entry -> the .pth file that adds it (site.addsitedir() adds each line that is not a
    comment and not an `import` line, relative to the file's directory)."""
    found = {}
    for directory in directories:
        try:
            names = sorted(name for name in os.listdir(directory) if name.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read(SHELL_READ_BYTES).splitlines()
            except (OSError, IOError):
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith("#") or re.match(r"import[ \t]", line):
                    continue
                found.setdefault(normalized(os.path.join(directory, line)), path)
    return found


def stdlib_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_path(key)
        if path:
            dirs.add(normalized(path))
            dirs.add(normalized(os.path.join(path, "lib-dynload")))
    return dirs


def classify_entries():
    """[{'path': raw sys.path entry, 'kind', 'pth'}] in sys.path order. kind: 'working-directory' (sys.path[0]
    of `python -c` and of `python script.py` run from the project folder), 'site-packages' (the
    installation's), 'user-site', 'PYTHONPATH', 'pth' (added by a .pth file), 'stdlib', 'other'."""
    site_dirs = set(normalized(p) for p in installation_site_dirs())
    user_site = user_site_dir()
    pythonpath = dict((normalized(os.path.join(WORKING_DIRECTORY, p)), p)
                      for p in reversed(os.environ.get("PYTHONPATH", "").split(os.pathsep)) if p)
    pth = pth_lines(list(site_dirs) + ([user_site] if user_site else []))
    stdlib = stdlib_dirs()
    entries = []
    for index, raw in enumerate(sys.path):
        real = normalized(raw)
        if index == 0 and raw == "":
            kind = "working-directory"
        elif real in site_dirs:
            kind = "site-packages"
        elif user_site and real == normalized(user_site):
            kind = "user-site"
        elif real in pythonpath:
            kind = "PYTHONPATH"
        elif real in pth:
            kind = "pth"
        elif real in stdlib or re.match(r"python\d+\.zip$", os.path.basename(raw)):
            kind = "stdlib"
        else:
            kind = "other"
        entries.append({"path": raw and project_path(raw), "kind": kind, "pth": pth.get(real) if kind == "pth" else None,
                        "pythonpath_item": pythonpath.get(real) if kind == "PYTHONPATH" else None})
    return entries


def path_hits(name, locations):
    """[(index into locations, spec)] of every location holding `name` (a module, a package, or a namespace
    portion), without importing anything."""
    from importlib.machinery import PathFinder

    hits = []
    for index, location in enumerate(locations):
        try:
            spec = PathFinder.find_spec(name, [location])
        except Exception:  # an unreadable directory or a broken path hook: not a place it comes from
            continue
        if spec is not None:
            hits.append((index, spec))
    return hits


def spec_origin(spec):
    if spec.loader is None:  # a namespace portion: a directory without __init__.py
        return list(spec.submodule_search_locations or [None])[0]
    return spec.origin


def locate(name, entries):
    """Where `import name` finds it: the first sys.path entry holding a regular module or package (a
    namespace portion counts only when no entry holds a regular one, as in the import system), and the
    other copies further down sys.path. Dotted names are looked for inside their parent's locations."""
    parent, _, leaf = name.rpartition(".")
    if parent:
        top = locate(parent, entries)
        outer = {key: top.get(key) for key in ("origin", "entry", "kind", "namespace")}
        if not top["found"]:
            return {"module": name, "found": False, "parent": dict(outer, found=False)}
        locations = top["package_dirs"]
        owners = top["package_entries"]
    else:
        locations = [project_path(entry["path"]) for entry in entries]
        owners = list(range(len(entries)))
    hits = path_hits(name, locations)
    regular = [(i, spec) for i, spec in hits if spec.loader is not None]
    chosen = regular or hits
    found = {"module": name, "found": bool(chosen), "origin": None, "entry": None, "entry_index": None,
             "kind": None, "namespace": False, "copies": [], "package_dirs": [], "package_entries": []}
    if parent:
        found["parent"] = dict(outer, found=True)
    if not chosen:
        return found
    first_index, first = chosen[0]
    if not regular:  # only namespace portions: the package is all of them together
        found["package_dirs"] = [loc for _, spec in hits for loc in spec.submodule_search_locations or ()]
        found["package_entries"] = [owners[i] for i, spec in hits for _ in spec.submodule_search_locations or ()]
    else:
        found["package_dirs"] = list(first.submodule_search_locations or ())
        found["package_entries"] = [owners[first_index]] * len(found["package_dirs"])
    entry_index = owners[first_index]
    found.update(origin=spec_origin(first), entry=entries[entry_index]["path"], entry_index=entry_index,
                 kind=entries[entry_index]["kind"], namespace=not regular)
    for index, spec in (regular or hits)[1:OTHER_COPIES_LIMIT + 1]:
        entry = entries[owners[index]]
        found["copies"].append({"origin": spec_origin(spec), "entry": entry["path"], "kind": entry["kind"]})
    if not parent:
        found.update(finder_check(name, found))
    return found


def finder_check(name, found):
    """The import system's own answer for a top-level name (sys.meta_path: editable-install finders come
    after the path finder): when it differs from the path scan, a finder, not a sys.path entry, supplies it."""
    own = list(sys.path)
    sys.path[:] = [project_path(p) for p in own]  # as the user's own `python` looks (a look: nothing is imported)
    try:
        spec = importlib_util.find_spec(name)
    except Exception:
        return {}
    finally:
        sys.path[:] = own
    if spec is None or spec.origin in (None, "namespace") or found["origin"] is None:
        return {}
    if normalized(spec.origin) == normalized(found["origin"]):
        return {}
    return {"origin": spec.origin, "entry": None, "entry_index": None, "kind": "finder",
            "finder": type(spec.loader).__name__ if spec.loader is not None else None}


def shell_lines():
    """Lines of the usual shell start-up files (and the environment's own activation scripts) that set
    PYTHONPATH: where an entry found there comes from. Read only when PYTHONPATH is set."""
    if not os.environ.get("PYTHONPATH"):
        return []
    home = os.path.expanduser("~")
    files = [os.path.join(home, name) for name in SHELL_FILES]
    files.append(os.path.join(sys.prefix, "bin", "activate"))
    activate_d = os.path.join(sys.prefix, "etc", "conda", "activate.d")
    try:
        files.extend(os.path.join(activate_d, name) for name in sorted(os.listdir(activate_d)))
    except OSError:
        pass
    found = []
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(SHELL_READ_BYTES)
        except (OSError, IOError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if "PYTHONPATH" in stripped and not stripped.startswith("#") and \
                    re.search(r"PYTHONPATH\s*=|setenv\s+PYTHONPATH|set\s+(-\w+\s+)*PYTHONPATH", stripped):
                found.append({"file": path, "line": number, "text": stripped[:300]})
                if len(found) >= SHELL_LINE_LIMIT:
                    return found
    return found


# Read from the working directory only when they would be imported in place of the standard library's:
# at most this many are recorded.
STDLIB_SHADOWS_LIMIT = 50


def stdlib_names():
    """(names, where they come from): the target's own sys.stdlib_module_names (Python 3.10+), else what
    its standard library directories and built-in modules offer (read, never imported)."""
    names = getattr(sys, "stdlib_module_names", None)
    if names:
        return set(names), "sys.stdlib_module_names"
    found = set(sys.builtin_module_names)
    for directory in stdlib_locations():
        found |= offered_names(directory)
    found.discard("site-packages")
    return found, "stdlib directory"


def stdlib_locations():
    found = []
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_path(key)
        if path:
            found += [path, os.path.join(path, "lib-dynload")]
    return [p for p in dict.fromkeys(found) if os.path.isdir(p)]


def offered_names(directory):
    """The top-level names a directory offers to `import` (modules, bytecode, extension modules, folders),
    by their file names only."""
    suffixes = sorted(machinery.all_suffixes(), key=len, reverse=True)
    names = set()
    try:
        entries = os.listdir(directory)
    except OSError:
        return names
    for entry in entries:
        for suffix in suffixes:
            if entry.endswith(suffix):
                names.add(entry[:-len(suffix)])
                break
        else:
            if "." not in entry:
                names.add(entry)
    return set(name for name in names if name.isidentifier())


def stdlib_shadows(names):
    """Files and folders of the working directory named like a module of the standard library, each with
    what `import` would load there (located, not imported) and what keeps the standard library's own in
    place, if anything: a built-in or frozen module, or one imported at start-up (masked_by)."""
    found = []
    stdlib = stdlib_locations()
    for name in sorted(offered_names(WORKING_DIRECTORY) & names):
        try:
            spec = machinery.PathFinder.find_spec(name, [WORKING_DIRECTORY])
        except Exception:
            continue
        if spec is None or spec.loader is None:  # a folder without __init__: the standard library's comes first
            continue
        if name in sys.builtin_module_names:
            masked_by = "builtin"
        elif machinery.FrozenImporter.find_spec(name) is not None:
            masked_by = "frozen"
        elif name in STARTUP_MODULES:
            masked_by = "startup"
        else:
            masked_by = None
        try:
            own = machinery.PathFinder.find_spec(name, stdlib)
        except Exception:
            own = None
        found.append({"module": name, "origin": spec.origin, "masked_by": masked_by,
                      "stdlib_origin": own.origin if own is not None and own.loader is not None else None})
        if len(found) >= STDLIB_SHADOWS_LIMIT:
            break
    return found


def module_origins():
    entries = classify_entries()
    modules = []
    for name in RESOLVED_MODULES:
        try:
            located = locate(name, entries)
        except Exception as exc:  # never let one odd path hook cost the whole description
            located = {"module": name, "found": False, "error": "%s: %s" % (type(exc).__name__, exc)}
        for key in ("package_dirs", "package_entries"):
            located.pop(key, None)
        modules.append(located)
    names, names_from = stdlib_names()
    return {
        "cwd": WORKING_DIRECTORY,
        "pythonpath": os.environ.get("PYTHONPATH"),
        "safe_path": bool(getattr(sys.flags, "safe_path", False)),
        "no_user_site": bool(sys.flags.no_user_site),
        "installation_site_dirs": installation_site_dirs(),
        "entries": entries,
        "modules": modules,
        "shell_lines": shell_lines(),
        "stdlib_names_from": names_from,
        "stdlib_shadows": stdlib_shadows(names),
    }


if __name__ == "__main__":
    python = describe_python()
    try:
        python["module_origins"] = module_origins()
    except Exception as exc:  # a describe that fails here must not cost the interpreter's description
        python["module_origins"] = {"error": "%s: %s" % (type(exc).__name__, exc)}
    distributions, python["distribution_count"] = describe_distributions()
    print(json.dumps({"python": python, "distributions": distributions}))
