''''exit 64 # '''
# ^ A no-op string in Python; in a POSIX shell it runs `exit 64` (see target_info.py).
#
# Verifies the TensorFlow-family distributions of the interpreter that runs it against their RECORD,
# and records its installers (pip, conda) and the wheel tags those distributions were installed from.
# Standard library only, Python 3.6 syntax; prints one JSON document. Never imports what it verifies.
#
# argv[1]: JSON options {"budget_s": seconds of sha256 hashing, "verify": false to record installers only,
#          "nice": false when no TensorFlow import runs beside it (it is then the run's critical path)},
#          or "-": the same options on the first line of stdin (sent when known: tfdoctor/__main__.py)
#
# Per distribution it records counts and only the files that are missing or altered (a report stays
# small with 30,000-line RECORDs). Sizes are checked for every file (one stat each); sha256 only for
# native libraries, smallest first, until the time budget is spent: TensorFlow's own libraries are
# hundreds of MB and this runs next to the TensorFlow import on the same cores.
import base64
import csv
import hashlib
import json
import os
import re
import sys
import time

# The distributions `import tensorflow` and tf.keras load files from; their own declared dependencies
# (Requires-Dist without an extra) are added from their metadata, one level deep.
FAMILY = re.compile(r"^(tensorflow|tf-nightly|tf-keras|intel-tensorflow|keras|tensorboard|ml-dtypes|numpy|"
                    r"protobuf|h5py|nvidia-)")
NATIVE = re.compile(r"\.(so(\.[0-9]+)*|dylib|pyd|dll)$")
PROBLEM_LIMIT = 10  # named per distribution; the rest are counted (problems_total)
NAMED_LIMIT = 50  # named over all distributions: a wrecked environment still gives a small report
CHUNK = 1 << 20


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def metadata_dirs():
    """(location, dirname) of every *.dist-info / *.egg-info on sys.path, first copy of a name first."""
    found, seen_dirs = [], set()
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in seen_dirs:
            continue
        seen_dirs.add(real)
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                found.append((entry, name))
    return found


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (OSError, IOError):
        return None


def headers(text):
    """Email-style metadata headers up to the body: {name: [values]} (Requires-Dist repeats)."""
    values = {}
    for line in (text or "").splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        values.setdefault(key.strip().lower(), []).append(value.strip())
    return values


def describe(location, dirname):
    path = os.path.join(location, dirname)
    metadata_name = "METADATA" if dirname.endswith(".dist-info") else "PKG-INFO"
    meta = headers(read_text(os.path.join(path, metadata_name)) if os.path.isdir(path) else read_text(path))
    name = (meta.get("name") or [dirname.split("-")[0]])[0]
    return {
        "name": canonical(name),
        "version": (meta.get("version") or [None])[0],
        "location": location,
        "path": path,
        "metadata": "dist-info" if dirname.endswith(".dist-info") else "egg-info",
        "requires": meta.get("requires-dist") or [],
        "requires_python": (meta.get("requires-python") or [None])[0],
    }


def requirement_name(line):
    if "extra" in line.partition(";")[2]:
        return None
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return canonical(match.group(1)) if match else None


def name_of(dirname):
    """The canonical name a metadata directory is named after: 'tensorflow_cpu-2.21.0.dist-info' ->
    'tensorflow-cpu' (wheel and egg-info directory names escape '-' in the name as '_')."""
    return canonical(dirname.rsplit(".", 1)[0].split("-")[0])


def select(found):
    """The TensorFlow family and what TensorFlow-family distributions declare they need. Metadata is
    read only for these (an environment may hold thousands of distributions)."""
    first = {}
    for location, dirname in found:
        first.setdefault(name_of(dirname), (location, dirname))
    chosen = {}
    for name in sorted(first):
        if FAMILY.match(name):
            chosen[name] = describe(*first[name])
    for dist in list(chosen.values()):
        if not dist["name"].startswith(("tensorflow", "tf-nightly", "intel-tensorflow", "keras", "tf-keras")):
            continue
        for line in dist["requires"]:
            name = requirement_name(line)
            if name and name in first and name not in chosen:
                chosen[name] = describe(*first[name])
    pip = describe(*first["pip"]) if "pip" in first else None
    return sorted(chosen.values(), key=lambda d: d["name"]), pip


def wheel_tags(dist):
    if dist["metadata"] != "dist-info":
        return []
    return headers(read_text(os.path.join(dist["path"], "WHEEL"))).get("tag") or []


def verify(dist, hash_queue, recorded):
    """Size-check every RECORD entry of `dist`; queue its native libraries for hashing; append to
    `recorded` the full path of every entry (for `owners_of`)."""
    entry = {
        "name": dist["name"], "version": dist["version"], "location": dist["location"],
        "metadata": dist["metadata"], "installer": None, "record": False,
        "listed": 0, "size_checked": 0, "exists_checked": 0, "unverifiable": 0, "outside": 0,
        "native_files": 0, "native_bytes": 0, "hashed_files": 0, "hashed_bytes": 0,
        "problems": [], "problems_total": 0,
    }
    installer = read_text(os.path.join(dist["path"], "INSTALLER")) if dist["metadata"] == "dist-info" else None
    entry["installer"] = installer.strip() if installer else None
    text = read_text(os.path.join(dist["path"], "RECORD")) if dist["metadata"] == "dist-info" else None
    if not text:
        return entry
    entry["record"] = True
    base = os.path.normpath(os.path.abspath(dist["location"]))
    prefix = base + "/" if os.sep == "/" and base != "/" else None
    for row in csv.reader(text.splitlines()):
        if not row or not row[0]:
            continue
        relative = row[0]
        digest = row[1] if len(row) > 1 else ""
        size_text = row[2] if len(row) > 2 else ""
        entry["listed"] += 1
        full = joined(prefix, relative) or os.path.normpath(os.path.join(base, relative))
        outside = not full.startswith(base + os.sep)  # scripts and data: '../../../bin/x'
        recorded.append(full)

        if outside:
            entry["outside"] += 1
        if relative.endswith(".pyc") or (not digest and not size_text and os.path.basename(relative).startswith("RECORD")):
            entry["unverifiable"] += 1  # compiled bytecode and RECORD itself carry no hash or size
            continue
        try:
            size = os.stat(full).st_size
        except OSError:
            add_problem(entry, relative, "missing", int(size_text) if size_text.isdigit() else None, None, outside, full)
            continue
        if not size_text.isdigit():
            entry["exists_checked"] += 1
            continue
        expected = int(size_text)
        if size != expected:
            add_problem(entry, relative, "size", expected, size, outside, full)
            continue
        entry["size_checked"] += 1
        if NATIVE.search(relative) and digest.startswith("sha256="):
            entry["native_files"] += 1
            entry["native_bytes"] += size
            hash_queue.append((size, full, relative, digest[len("sha256="):], entry))
    return entry


def joined(prefix, relative):
    """prefix + relative when that is already the normalised path (nearly every RECORD row: one
    concatenation instead of join and normpath, 15,000 times for TensorFlow), else None."""
    if prefix is None or relative.startswith("/"):
        return None
    padded = "/" + relative + "/"
    if "/./" in padded or "/../" in padded or "//" in padded:
        return None
    return prefix + relative


def owners_of(entries, recorded):
    """{full path: names of the distributions whose RECORD lists it} for the paths with a problem
    (built only for those: a dict of every path of TensorFlow's RECORD costs a tenth of the walk)."""
    wanted = set(item["_full"] for entry in entries for item in entry["problems"])
    owners = {}
    if wanted:
        for entry, paths in zip(entries, recorded):
            for full in paths:
                if full in wanted:
                    owners.setdefault(full, []).append(entry["name"])
    return owners


def add_problem(entry, path, problem, expected, size, outside, full):
    entry["problems_total"] += 1
    if len(entry["problems"]) < PROBLEM_LIMIT:
        item = {"path": path, "problem": problem, "expected_size": expected, "size": size, "_full": full}
        if outside:
            item["outside"] = True
        entry["problems"].append(item)


def sha256_within(path, deadline):
    """The urlsafe-base64 sha256 of a file, or None when the deadline passes first."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            if time.perf_counter() > deadline:
                return None
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
    return base64.urlsafe_b64encode(digest.digest()).decode("ascii").rstrip("=")


def hash_natives(queue, budget_s):
    """Hash queued libraries smallest first until the budget is spent; True when it ran out."""
    deadline = time.perf_counter() + budget_s
    for size, full, relative, expected, entry in sorted(queue, key=lambda item: (item[0], item[1])):
        try:
            actual = sha256_within(full, deadline)
        except (OSError, IOError):
            add_problem(entry, relative, "missing", size, None, False, full)
            continue
        if actual is None:
            return True
        entry["hashed_files"] += 1
        entry["hashed_bytes"] += size
        if actual != expected:
            add_problem(entry, relative, "hash", size, size, False, full)
    return False


def conda_version():
    """The conda that manages this environment: its own history names it ('# conda version: 23.7.4'),
    else the conda package of the base environment (conda-meta/conda-<version>-<build>.json)."""
    prefix = sys.prefix
    if not os.path.isdir(os.path.join(prefix, "conda-meta")):
        return None
    history = read_text(os.path.join(prefix, "conda-meta", "history")) or ""
    said = re.findall(r"^# conda version: (\S+)", history, re.M)
    if said:
        return said[-1]
    bases = [prefix]
    if os.path.basename(os.path.dirname(prefix)) == "envs":
        bases.append(os.path.dirname(os.path.dirname(prefix)))
    for base in bases:
        try:
            names = os.listdir(os.path.join(base, "conda-meta"))
        except OSError:
            continue
        for name in names:
            match = re.match(r"^conda-(\d[^-]*)-[^-]+\.json$", name)
            if match:
                return match.group(1)
    return None


def renice(options):
    if options.get("nice", True) and hasattr(os, "nice"):
        try:
            os.nice(10)  # hashing takes only the CPU the TensorFlow import leaves
        except OSError:
            pass


def main():
    # "-": the options come on stdin, once the doctor knows them; the RECORDs are walked meanwhile
    # (nearly every run verifies), niced or not only from then on
    late = sys.argv[1:] == ["-"]
    options = json.loads(sys.argv[1]) if len(sys.argv) > 1 and not late else {}
    started = time.perf_counter()
    if not late:
        renice(options)
    chosen, pip = select(metadata_dirs())
    installers = {
        "pip": pip["version"] if pip else None,
        "pip_location": pip["location"] if pip else None,
        "conda": conda_version(),
        "wheels": [{"name": d["name"], "version": d["version"], "tags": wheel_tags(d),
                    "requires_python": d["requires_python"]} for d in chosen],
    }
    queue = []
    recorded = [[] for _ in chosen]
    entries = [verify(dist, queue, paths) for dist, paths in zip(chosen, recorded)] if late or options.get("verify", True) else []
    if late:
        options = json.loads(sys.stdin.readline() or "{}")
        renice(options)
    budget_s = float(options.get("budget_s", 0.3))
    out = {"installers": installers}
    if options.get("verify", True):
        stopped = hash_natives(queue, budget_s)
        named = 0
        for entry in entries:
            entry["problems"] = entry["problems"][:max(0, NAMED_LIMIT - named)]
            named += len(entry["problems"])
        owners = owners_of(entries, recorded)
        for entry in entries:
            for item in entry["problems"]:
                # another distribution's RECORD lists the same file: it was overwritten, not damaged
                others = sorted(set(owners.get(item.pop("_full"), ())) - set([entry["name"]]))
                if others:
                    item["also_in"] = others
        out["integrity"] = {
            "budget_s": budget_s,
            "hash_stopped": stopped,
            "elapsed_s": round(time.perf_counter() - started, 3),
            "distributions": entries,
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
