"""Sandia OpenSHMEM's build, which tools/build-sos makes and tools/setup records (docs/openshmem.md):
where it is, or why there is none. Its tests run under s4bxi-launch (tests/shmem/) and its
performance programs in the benchmarks (bench/shmem_perf.py, bench/compare_servers.py)."""
from pathlib import Path

HOW_TO_BUILD = ("run tools/setup with SOS's source available (tools/build-sos PATH, S4BXI_SOS_SOURCE=PATH, or "
                "sos-1.5.3.tar.gz in ~/.cache/s4bxi/sources/; docs/openshmem.md)")


def sos_prefix(launcher, given):
    """SOS's installation prefix, or raises LookupError saying why there is none."""
    if given:
        prefix = Path(given)
    else:
        record = Path(launcher).resolve().parent.parent / "sos-prefix"
        if not record.exists():
            raise LookupError(f"Sandia OpenSHMEM is not built ({record} is missing): {HOW_TO_BUILD}")
        prefix = Path(record.read_text().strip())
    if not (prefix / "BUILD-INFO").exists():
        raise LookupError(f"{prefix} is no complete SOS build (no BUILD-INFO): {HOW_TO_BUILD}")
    return prefix
