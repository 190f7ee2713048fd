''''exit 64 # '''
# ^ A no-op string in Python; in a POSIX shell it runs `exit 64`, so `--python /bin/sh` exits at once
# instead of running this file as shell commands (`import json` is ImageMagick's `import` there).
#
# Describes the interpreter that runs it: version, architecture, Rosetta, environment kind, and every
# installed distribution (read from metadata, never imported). Standard library only; prints JSON.
import binascii
import json
import os
import platform
import site
import struct
import sys
import sysconfig

# Distributions whose files matter to the diagnosis; for these the top-level names they install and
# the native libraries they ship are recorded, the rest get name, version and location only.
DETAILED_PREFIXES = ("tensorflow", "tf-nightly", "tf-keras", "keras", "numpy", "ml-dtypes", "nvidia-", "protobuf", "intel-tensorflow")


def canonical(name):
    out = []
    for ch in name.lower():
        out.append("-" if ch in "_." else ch)
    return "".join(out)


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
    (read by tfdoctor/macho.py). Thin files: 16 bytes; universal ones: the whole fat header."""
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


def describe_python():
    cfg = pyvenv_cfg()
    stdlib = sysconfig.get_path("stdlib") or ""
    try:
        site_packages = site.getsitepackages()
    except AttributeError:  # old virtualenv's site.py
        site_packages = []
    return {
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
        "in_venv": getattr(sys, "base_prefix", sys.prefix) != sys.prefix,
        "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
        "uv_version": (cfg or {}).get("uv"),
        "externally_managed": bool(stdlib) and os.path.exists(os.path.join(stdlib, "EXTERNALLY-MANAGED")),
        "site_packages": site_packages,
        "user_site": site.getusersitepackages() if hasattr(site, "getusersitepackages") else None,
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
        "sys_path": [p for p in sys.path if p],
        # Added for the macOS checks: the build banner names Anaconda / conda-forge builds, the
        # executable's Mach-O header says thin x86_64 vs universal2, and the plugin directories
        # are where a second tensorflow-metal copy hides.
        "sys_version": " ".join(sys.version.split()),
        "executable_macho": executable_macho(),
        "tensorflow_plugin_dirs": tensorflow_plugin_dirs(),
    }


def recorded_paths(dist):
    """The paths a distribution installed, as strings. RECORD is read as CSV directly: Distribution.files
    builds a PackagePath per line, about 0.3 s for TensorFlow's 30,000-line RECORD."""
    try:
        text = dist.read_text("RECORD")
    except Exception:
        text = None
    if text:
        import csv

        return [row[0] for row in csv.reader(text.splitlines()) if row]
    return [str(path) for path in dist.files or ()]


def top_level_names(paths):
    names = set()
    for path in paths:
        parts = path.replace("\\", "/").split("/")
        head = parts[0]
        if head.endswith((".dist-info", ".egg-info")) or head in ("..", ""):
            continue
        if head.endswith(".data") and len(parts) > 2:  # wheel data dirs: name.data/purelib/pkg/...
            head = parts[2]
        names.add(head)
    return sorted(names)


def native_libraries(dist, paths):
    return [str(dist.locate_file(path)) for path in paths
            if path.endswith((".dylib", ".so")) and "tensorflow-plugins" in path]


def describe_distributions():
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return None
    found = []
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:
            name = None
        if not name:
            continue
        entry = {
            "name": canonical(name),
            "version": dist.version,
            "location": str(dist.locate_file("")),
        }
        if canonical(name).startswith(DETAILED_PREFIXES):
            try:
                installer = dist.read_text("INSTALLER")
            except Exception:
                installer = None
            paths = recorded_paths(dist)
            entry.update({
                "installer": installer.strip() if installer else None,
                "requires": list(dist.requires or ()),
                "top_level": top_level_names(paths),
                "plugin_libraries": native_libraries(dist, paths),
            })
        found.append(entry)
    return found


if __name__ == "__main__":
    print(json.dumps({"python": describe_python(), "distributions": describe_distributions()}))
