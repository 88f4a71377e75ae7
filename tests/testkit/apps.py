"""What the scripts that run LULESH and Quicksilver (built unmodified by tools/build-apps,
their prefixes recorded by tools/setup in BUILD_DIR/lulesh-prefix and quicksilver-prefix)
share: finding a build, LULESH's arguments, the input deck of Quicksilver on a number of
ranks, and reading one field of their output (tests/apps/run_apps.py, bench/validation.py)."""
import re
from pathlib import Path

APPLICATIONS = ("lulesh", "quicksilver")
LULESH_SIZE, LULESH_ITERATIONS = 12, 30
PROGRAM = {"lulesh": "lulesh2.0", "quicksilver": "qs"}


def application_prefix(build, application):
    """The installation prefix of `application` that tools/setup recorded for the build
    directory `build`, or raises LookupError saying how to provide one."""
    record = Path(build) / f"{application}-prefix"
    if not record.exists():
        raise LookupError(f"{application} was not built ({record} is missing): run tools/setup with its tarball "
                          f"beside the clone or named by S4BXI_{application.upper()}_SOURCE (docs/applications.md)")
    return Path(record.read_text().strip())


def lulesh_arguments(full, size=LULESH_SIZE, iterations=LULESH_ITERATIONS):
    """LULESH's arguments: a cube of `size` elements per rank, `iterations` of them or, `full`,
    to the problem's end."""
    return ["-s", str(size)] + ([] if full else ["-i", str(iterations)])


def quicksilver_deck(source_root, ranks):
    """The input deck of Quicksilver on `ranks` ranks (tests/apps/quicksilver/qsRANKS.inp)."""
    return Path(source_root) / "tests" / "apps" / "quicksilver" / f"qs{ranks}.inp"


def field(pattern, text):
    """The first group of the first line of `text` that `pattern` matches, or None."""
    found = re.search(pattern, text, re.M)
    return found.group(1) if found else None
