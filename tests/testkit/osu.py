"""What the scripts that run the OSU micro-benchmarks 5.3 (built unmodified by
tools/build-osu, its directory recorded by tools/setup in BUILD_DIR/osu-prefix) share:
finding that build, reading the figures the programs print, and the choice between the
suite's cut-down runs and every size (S4BXI_CHECK_FULL=1, tools/check --full)."""
import os
import re
from pathlib import Path

HOW_TO_BUILD = ("run tools/setup with the OSU 5.3 tarball beside the clone or named by S4BXI_OSU_SOURCE "
                "(docs/openmpi.md)")
# A figure line: the size, then one or more numbers (latency, bandwidth, rates...).
FIGURE = re.compile(r"^\s*(\d+)\s+([-\d.]+)", re.M)


def osu_directory(build):
    """The OSU build that tools/setup recorded for the build directory `build`, or raises
    LookupError saying how to provide one."""
    record = Path(build) / "osu-prefix"
    if not record.exists():
        raise LookupError(f"the OSU micro-benchmarks were not built ({record} is missing): {HOW_TO_BUILD}")
    return Path(record.read_text().strip())


def figures(output):
    """{size: first figure} of the lines an OSU program printed for its sizes."""
    return {int(size): float(value) for size, value in FIGURE.findall(output)}


def every_size():
    """Whether the run wants every size at OSU's own counts (tools/check --full)."""
    return os.environ.get("S4BXI_CHECK_FULL") == "1"


def report(failures, not_run, success):
    """The end of a group: its programs not run yet with their reason, then `FAIL:` and the
    failures, or `ok: success`; the exit status."""
    for name, why in not_run.items():
        print(f"{name}: not supported yet: {why}")
    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print(f"ok: {success}")
    return 0
