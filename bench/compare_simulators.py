#!/usr/bin/env python3
"""Wall time per message of s4bxi against the reference simulator S4BXI and SimGrid's SMPI.

Runs the same workloads on the three simulators and prints the marginal wall time per
iteration of each (runs of N and 2N iterations: the difference divided by N, so start-up is
left out), as the median of the repetitions with their range, and the ratios
s4bxi / S4BXI and s4bxi / SMPI:

  * Portals ping-pongs of 8 B, 1 KiB, 64 KiB and 1 MiB (bench/message_rate.c) and an 8-byte
    recursive-doubling allreduce on 2, 16 and 64 ranks (bench/allreduce.c), in raw Portals
    under S4BXI and s4bxi; SMPI runs their MPI counterparts (bench/mpi_pingpong.c,
    bench/mpi_allreduce.c with two ints and SMPI's recursive-doubling allreduce);
  * stock Open MPI under s4bxi, an 8-byte MPI ping-pong and a 16-rank MPI_Allreduce of
    8 bytes, against the same programs under SMPI.

s4bxi runs under --cpu-model zero on the built-in platform (one switch, one rank per node),
S4BXI with CPU time ignored (S4BXI_CPU_THRESHOLD=1) on a platform generated from the same
configuration (tests/reference/compare_with_reference.py), SMPI with computation not
simulated on a cluster of the same link bandwidth, latency and core speed. Each repetition
runs every simulator in turn, workload by workload, so that the host's load falls on all
alike. Also printed: the host's load average before and after, what two memcpy of 1 MiB
cost on this host beside the 1 MiB ping-pong (a round trip cannot cost less), and the
simulated loop time of one run on each side (S4BXI and s4bxi run the same programs: their
simulated times should agree).

S4BXI is built from a source tree given with --s4bxi-source DIR or S4BXI_REFERENCE_SOURCE=DIR
(a checkout of the public repository S4BXI/S4BXI; nothing is downloaded), out of that tree,
into ~/.cache/s4bxi/reference-HASH (the project's cache: $S4BXI_CACHE_DIR if set; HASH of
the tree's commit, or of its content when it is not a clean git checkout), and the build is
reused by later runs. Without a source, the S4BXI column is skipped. The tree's git
submodules may be missing (a copy made by `git archive`, for instance): a FindSimGrid.cmake
that finds Debian's SimGrid and an empty add_pandoc_man then stand in for cmake/Modules, and
Debian's libpugixml-dev for pugixml, in a shadow of the tree inside the cache; the tree
itself is never written to.

Usage: bench/compare_simulators.py [BUILD_DIR] [--s4bxi-source DIR] [--repeat 3] [--quick]

--quick runs a fortieth of the iterations, once: a smoke test, not a measurement.
Exit status: 0 when every run succeeded, 1 when one failed, 2 when the benchmark could not
start (no s4bxi build, the reference could not be built).
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
import mpi_compare  # noqa: E402
from endurance import memcpy_us  # noqa: E402
from testkit import reference  # noqa: E402
from testkit.launch import command, environment  # noqa: E402

SOURCE_VARIABLE = "S4BXI_REFERENCE_SOURCE"
# Part of the cache key: change it when the way the reference is built changes.
BUILD_RECIPE = "cmake Release, shadow tree for missing submodules, v1"

FIND_SIMGRID = """\
# Stands in for the reference's cmake/Modules submodule: finds the installed SimGrid.
find_path(SimGrid_INCLUDE_DIR NAMES simgrid/version.h)
find_library(SimGrid_LIBRARY NAMES simgrid)
if(SimGrid_INCLUDE_DIR)
  file(STRINGS "${SimGrid_INCLUDE_DIR}/simgrid/version.h" _sg_lines REGEX "define SIMGRID_VERSION_(MAJOR|MINOR|PATCH) ")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*SIMGRID_VERSION_${_part} ([0-9]+).*" "\\\\1" _sg_${_part} "${_sg_lines}")
  endforeach()
  set(SimGrid_VERSION "${_sg_MAJOR}.${_sg_MINOR}.${_sg_PATCH}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SimGrid REQUIRED_VARS SimGrid_LIBRARY SimGrid_INCLUDE_DIR
                                  VERSION_VAR SimGrid_VERSION)
"""
PANDOC_MAN = """\
# Stands in for the reference's cmake/Modules submodule: no man page.
function(add_pandoc_man)
endfunction()
"""
PUGIXML_STAND_IN = """\
// Stands in for the reference's pugixml submodule: pugixml.hpp comes from the system
// (Debian's libpugixml-dev) and the library is linked with -lpugixml.
"""

# PMI-1 for the reference, whose ranks are actors of one process (bench/allreduce.c).
GLUE_PMI = r"""
int PMI_Init(int *spawned) { *spawned = 0; return 0; }
int PMI_Get_rank(int *rank) { *rank = (int)s4bxi_get_my_rank(); return 0; }
int PMI_Get_size(int *size) { *size = (int)s4bxi_get_rank_number(); return 0; }
int PMI_Barrier(void) { s4bxi_barrier(); return 0; }
int PMI_Finalize(void) { return 0; }
"""


class Row:
    """One workload: `kind` is pingpong or allreduce; `n` the shorter run's iterations on
    S4BXI and s4bxi, `n_smpi` on SMPI (cheaper per iteration, so more are needed to stand
    out of its start-up's noise); `mpi`: s4bxi runs Open MPI rather than raw Portals."""

    def __init__(self, label, kind, ranks, size, n, n_smpi, mpi=False):
        self.label, self.kind, self.ranks, self.size = label, kind, ranks, size
        self.n, self.n_smpi, self.mpi = n, n_smpi, mpi


# The shorter runs last about 1 to 4 s of wall time on a loaded 2-core host: a start-up's
# jitter (up to a second there, for s4bxi's several processes) must not drown the difference.
ROWS = [
    Row("Portals ping-pong 8 B", "pingpong", 2, 8, 20000, 40000),
    Row("ping-pong 1 KiB", "pingpong", 2, 1024, 10000, 40000),
    Row("ping-pong 64 KiB", "pingpong", 2, 64 << 10, 5000, 20000),
    Row("ping-pong 1 MiB", "pingpong", 2, 1 << 20, 1000, 4000),
    Row("8 B recursive-doubling allreduce, 2 ranks", "allreduce", 2, 8, 10000, 40000),
    Row("same, 16 ranks", "allreduce", 16, 8, 500, 4000),
    Row("same, 64 ranks", "allreduce", 64, 8, 80, 400),
    Row("Open MPI ping-pong 8 B (MPI)", "pingpong", 2, 8, 4000, 40000, mpi=True),
    Row("Open MPI MPI_Allreduce 8 B, 16 ranks (MPI)", "allreduce", 16, 8, 400, 4000, mpi=True),
]
QUICK_DIVISOR = 40
SIDES = ("S4BXI", "s4bxi", "SMPI")


def say(message):
    print(message, file=sys.stderr, flush=True)


def stop(message):
    say(f"compare_simulators: {message}")
    sys.exit(2)


# ---------------------------------------------------------------------------------------
# Building the reference

def git(source, *args):
    done = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def tree_identity(source):
    """The commit of a clean git checkout whose top is `source`, else a hash of its files."""
    if git(source, "rev-parse", "--show-toplevel") == str(source):
        head = git(source, "rev-parse", "HEAD")
        if head and git(source, "status", "--porcelain", "--untracked-files=no") == "":
            return f"commit {head}"
    digest = hashlib.sha256()
    for directory, subdirectories, files in os.walk(source):
        subdirectories[:] = sorted(d for d in subdirectories if d != ".git")
        for name in sorted(files):
            path = Path(directory, name)
            digest.update(str(path.relative_to(source)).encode() + b"\0")
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return f"content {digest.hexdigest()}"


def missing_parts(source):
    """What of the reference's submodules is absent: {name: what stands in for it}."""
    missing = {}
    modules = source / "cmake" / "Modules"
    for name, text in (("FindSimGrid.cmake", FIND_SIMGRID), ("PandocMan.cmake", PANDOC_MAN)):
        if not (modules / name).is_file():
            missing[f"cmake/Modules/{name}"] = text
    if not (source / "pugixml" / "src" / "pugixml.cpp").is_file():
        missing["pugixml/src/pugixml.cpp"] = PUGIXML_STAND_IN
    return missing


def shadow_tree(source, shadow, missing):
    """A tree of symbolic links to `source` where the missing files are written in, in
    directories of their own: the source tree is left as it is."""
    shutil.rmtree(shadow, ignore_errors=True)
    shadow.mkdir(parents=True)

    def mirror(source_dir, shadow_dir, prefix):
        for entry in sorted(source_dir.iterdir()) if source_dir.is_dir() else []:
            relative = prefix + entry.name
            if entry.name == ".git":
                continue
            if any(m.startswith(relative + "/") for m in missing):
                (shadow_dir / entry.name).mkdir()
                mirror(entry, shadow_dir / entry.name, relative + "/")
            elif relative not in missing:
                (shadow_dir / entry.name).symlink_to(entry)

    mirror(source, shadow, "")
    for relative, text in missing.items():
        path = shadow / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build_reference(source, cache_root):
    """Builds and installs the reference from `source` into the cache (once); returns its
    install prefix, or stops with what is missing."""
    source = source.resolve()
    if not (source / "CMakeLists.txt").is_file() or not (source / "src" / "privatization_main.cpp").is_file():
        stop(f"{source} is not a source tree of the reference simulator S4BXI "
             f"(no CMakeLists.txt and src/privatization_main.cpp)")
    missing = missing_parts(source)
    identity = tree_identity(source)
    key = hashlib.sha256("\n".join([BUILD_RECIPE, identity, *sorted(missing)]).encode()).hexdigest()[:16]
    cache = cache_root / f"reference-{key}"
    prefix, done_mark = cache / "prefix", cache / "installed"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run building the same tree: wait for it
        if done_mark.exists() and (prefix / "bin" / "s4bximain").exists():
            say(f"S4BXI: reusing the build of {source} ({identity[:48]}) in {cache}")
            return prefix
        say(f"S4BXI: building {source} ({identity[:48]}) into {cache}; this takes a few minutes, once")
        configure_source, extra = source, []
        if missing:
            say("S4BXI: the source tree lacks its git submodules: " + ", ".join(sorted(missing)) + ".\n"
                "  (In a git checkout, `git submodule update --init` in the tree brings them.) As\n"
                "  tests/reference/compare_with_reference.py notes, a FindSimGrid.cmake that finds the\n"
                "  installed SimGrid and an empty add_pandoc_man function are enough for cmake/Modules;\n"
                "  pugixml comes from Debian's libpugixml-dev. They are written into a shadow of the tree\n"
                f"  in {cache / 'source'}; the tree itself is not touched.")
            if "pugixml/src/pugixml.cpp" in missing:
                if not Path("/usr/include/pugixml.hpp").exists():
                    stop("pugixml is missing from the reference's tree and Debian's libpugixml-dev is "
                         "not installed: install it (tools/setup does), or check out the submodule: "
                         f"git -C {source} submodule update --init pugixml")
                extra.append("-DCMAKE_CXX_STANDARD_LIBRARIES=-lpugixml")
            configure_source = cache / "source"
            shadow_tree(source, configure_source, missing)
        build, log = cache / "build", cache / "build.log"
        shutil.rmtree(build, ignore_errors=True)
        steps = [["cmake", "-S", str(configure_source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                  f"-DCMAKE_INSTALL_PREFIX={prefix}", *extra],
                 ["nice", "-n", "10", "cmake", "--build", str(build), "-j", str(min(os.cpu_count() or 1, 4))],
                 ["cmake", "--install", str(build)]]
        with open(log, "w") as out:
            for step in steps:
                out.write(f"$ {' '.join(step)}\n")
                out.flush()
                if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                    tail = log.read_text().splitlines()[-40:]
                    stop(f"building the reference failed at `{' '.join(step)}` "
                         f"(whole log: {log}):\n" + "\n".join(tail))
        done_mark.write_text(identity + "\n")
        say(f"S4BXI: installed in {prefix}")
        return prefix


# ---------------------------------------------------------------------------------------
# Runs

def settings(ranks):
    """s4bxi's settings of a row: one rank per node of the built-in platform."""
    return [f"platform.nodes={ranks}"]


def arguments(row, iterations, mpi):
    if row.kind == "pingpong":  # MPI: the payload is not touched, as by message_rate
        return [str(iterations), str(row.size)] + (["0"] if mpi else [])
    return [str(iterations), str(row.size // 4)] if mpi else [str(iterations)]  # MPI: ints


def portals_programs(build):
    return {kind: build / "bench" / program for kind, program in
            (("pingpong", "message_rate"), ("allreduce", "allreduce"))}


class Reference:
    """S4BXI's side of a Portals row: the programs built against the installed reference,
    a platform generated from s4bxi's configuration, and the command line that runs them
    (bench/server_work.py counts the instructions of the same runs)."""

    def __init__(self, build, work, prefix):
        self.work, self.prefix = work, prefix
        self.launcher = build / "launcher" / "s4bxi-launch"
        self.libraries = self.build_programs(portals_programs(build))
        self.configs = {}

    def build_programs(self, programs):
        cc = os.environ.get("CC", "cc")
        glue_source, glue = self.work / "glue_reference.c", self.work / "glue_reference.o"
        glue_source.write_text(reference.GLUE_REFERENCE + GLUE_PMI)
        reference.run([cc, "-O2", "-fPIC", "-c", f"-I{self.prefix / 'include'}", glue_source, "-o", glue])
        libraries = {}
        for kind, program in programs.items():
            library = self.work / f"lib{program.name}.so"
            reference.build_reference(cc, ROOT, self.prefix, HERE / f"{program.name}.c", glue, library,
                                      [f"-I{ROOT / 'include'}"])  # pmi.h
            libraries[kind] = library
        return libraries

    def config(self, ranks):
        if ranks not in self.configs:
            self.configs[ranks] = reference.s4bxi_config(self.launcher, ROOT / "platforms" / "default.toml",
                                                         settings(ranks))
        return self.configs[ranks]

    def command(self, row, iterations):
        """The command line and environment of a run of `iterations` of `row`."""
        config = self.config(row.ranks)
        e2e = config.get("nic.e2e", "true") == "true"
        platform = self.work / f"reference-{row.ranks}.xml"
        if not platform.exists():
            platform.write_text(reference.reference_platform_xml(config))
        library = self.libraries[row.kind]
        deploy = self.work / f"deploy-{row.kind}.xml"
        deploy.write_text(reference.reference_deployment_xml(arguments(row, iterations, False), e2e, row.ranks))
        argv = [str(self.prefix / "bin" / "s4bximain"), str(platform), str(deploy), str(library),
                library.stem.removeprefix("lib")]
        return argv, reference.reference_env(config, self.prefix, None)


class Simulators:
    """Builds the programs of each side and runs one workload on one side."""

    def __init__(self, build, work, prefix, timeout):
        self.build, self.work, self.timeout = build, work, timeout
        self.launcher = build / "launcher" / "s4bxi-launch"
        self.mpi, self.mpi_problems = mpi_compare.compile_programs(work, ("mpi_pingpong", "mpi_allreduce"))
        self.runners = mpi_compare.Runners(build, work, timeout)
        # Nothing of the programs' own work is simulated, as under --cpu-model zero; the
        # allreduce is recursive doubling, as bench/allreduce.c's.
        self.runners.smpi_options += ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/allreduce:rdb"]
        self.portals = portals_programs(build)
        self.reference = Reference(build, work, prefix) if prefix else None

    def run(self, side, row, iterations):
        if side == "SMPI":
            name = f"mpi_{row.kind}"
            return self.runners.smpi(self.mpi["smpi", name], row.ranks, arguments(row, iterations, True))
        if side == "s4bxi" and row.mpi:
            name = f"mpi_{row.kind}"
            return self.runners.s4bxi(self.mpi["mpi", name], row.ranks, arguments(row, iterations, True), "zero")
        if side == "s4bxi":
            line = command(self.launcher, self.portals[row.kind], *arguments(row, iterations, False), ranks=row.ranks,
                           timeout=self.timeout, settings=settings(row.ranks))
            wall, done = mpi_compare.run(line, self.timeout + 30, environment())
            return mpi_compare.outcome(wall, None if done and done.returncode == 124 else done)
        argv, env = self.reference.command(row, iterations)
        return mpi_compare.outcome(*mpi_compare.run(argv, self.timeout, env))

    def available(self, side, row):
        if side == "S4BXI":
            return not row.mpi and self.reference is not None
        if side == "SMPI":
            return self.mpi["smpi", f"mpi_{row.kind}"] is not None
        if row.mpi:
            return self.mpi["mpi", f"mpi_{row.kind}"] is not None
        return True


# ---------------------------------------------------------------------------------------
# Report

def figure(value):
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}"


def cell(values):
    """Median and range of the marginal costs, or '-'."""
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return figure(median)
    return f"{figure(median)} ({figure(min(values))}–{figure(max(values))})"


def quotient(a, b):
    if not a or not b:
        return "-"
    x, y = statistics.median(a), statistics.median(b)
    if y <= 0 or x <= 0:
        return "-"
    return f"{x / y:.1f}" if x / y < 10 else f"{x / y:.0f}"


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def cache_root():
    """The project's cache, outside the clone (tools/build-openmpi-portals4 uses it too)."""
    if os.environ.get("S4BXI_CACHE_DIR"):
        return Path(os.environ["S4BXI_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "s4bxi"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"),
                        help="s4bxi build directory (default: build/ of this checkout)")
    parser.add_argument("--s4bxi-source", type=Path, default=os.environ.get(SOURCE_VARIABLE) or None,
                        help=f"source tree of the reference simulator S4BXI (default: ${SOURCE_VARIABLE}); "
                             "without one, the S4BXI column is skipped")
    parser.add_argument("--cache", type=Path, default=cache_root(),
                        help="where the reference is built (default: $S4BXI_CACHE_DIR, else "
                             "$XDG_CACHE_HOME/s4bxi, else ~/.cache/s4bxi, as for Open MPI's components)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of every run (default: 3)")
    parser.add_argument("--quick", action="store_true",
                        help=f"1/{QUICK_DIVISOR} of the iterations, one repetition: a smoke test")
    parser.add_argument("--only", help="comma-separated row numbers (1-based) to run, e.g. 1,4")
    parser.add_argument("--timeout", type=float, default=600, help="wall-clock limit of each run, s")
    options = parser.parse_args()
    # s4bxi-launch refuses S4BXI_* variables it does not know: the children must not see ours.
    os.environ.pop(SOURCE_VARIABLE, None)
    build = Path(options.build).resolve()
    if not (build / "launcher" / "s4bxi-launch").exists():
        stop(f"{build}/launcher/s4bxi-launch not found: build s4bxi first (ninja -C {options.build})")
    repeat = 1 if options.quick else max(1, options.repeat)
    divisor = QUICK_DIVISOR if options.quick else 1
    rows = ROWS
    if options.only:
        rows = [ROWS[int(i) - 1] for i in options.only.split(",") if i.strip()]

    prefix = None
    how_to = (f"to include the reference simulator, point to a checkout of the public repository S4BXI/S4BXI "
              f"with --s4bxi-source DIR or {SOURCE_VARIABLE}=DIR; it is built once into "
              f"{options.cache}/reference-HASH (needs cmake, Debian's libsimgrid-dev, and libpugixml-dev if "
              f"the tree lacks its submodules; nothing is downloaded)")
    if options.s4bxi_source:
        prefix = build_reference(options.s4bxi_source, options.cache.expanduser())
    else:
        say(f"S4BXI: skipped, no source tree given: {how_to}.")

    failures = []
    load_before = os.getloadavg()  # after the reference's build, if any
    with tempfile.TemporaryDirectory(prefix="s4bxi-compare-simulators-") as scratch:
        simulators = Simulators(build, Path(scratch), prefix, options.timeout)
        for problem in simulators.mpi_problems:
            say(f"warning: {problem}")
        marginal = {(i, side): [] for i in range(len(rows)) for side in SIDES}
        simulated = {}
        for i, row in enumerate(rows):
            sides = [s for s in SIDES if simulators.available(s, row)]
            for repetition in range(repeat):
                # Each repetition starts with another simulator.
                order = sides[repetition % len(sides):] + sides[:repetition % len(sides)]
                for side in order:
                    n = max(2, (row.n_smpi if side == "SMPI" else row.n) // divisor)
                    short, long = simulators.run(side, row, n), simulators.run(side, row, 2 * n)
                    for result, count in ((short, n), (long, 2 * n)):
                        if result.error:
                            failures.append((f"{row.label}, {side}, {count} iterations", result))
                    if short.error or long.error:
                        continue
                    marginal[i, side].append((long.wall - short.wall) / n * 1e6)
                    simulated.setdefault((i, side), (n, short.loop))
                    say(f"  {row.label}: {side} {marginal[i, side][-1]:.1f} µs per iteration "
                        f"(repetition {repetition + 1})")
        copy_pair = 2 * memcpy_us(1 << 20)
    load_after = os.getloadavg()

    print(f"# s4bxi against S4BXI and SMPI: marginal wall µs per iteration\n")
    print(f"host: {os.cpu_count()} cores; load average before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)}")
    print(f"{repeat} repetition(s), each runs every simulator in turn; a cell is the median (min–max) of "
          f"(wall of 2N iterations - wall of N) / N, in µs")
    print(f"S4BXI: {f'not run ({how_to})' if prefix is None else prefix / 'bin' / 's4bximain'}; "
          f"s4bxi: {build / 'launcher' / 's4bxi-launch'} --cpu-model zero; SMPI: smpirun, the MPI programs\n")
    table = []
    for i, row in enumerate(rows):
        label = row.label
        if row.size == 1 << 20 and row.kind == "pingpong":
            label += f" (two memcpy of 1 MiB here: {copy_pair:.0f} µs)"
        theirs, ours, smpi = (marginal[i, side] for side in SIDES)
        table.append([label, cell(theirs) if not row.mpi else "", cell(ours), cell(smpi),
                      quotient(ours, theirs) if not row.mpi else "", quotient(ours, smpi)])
    print(markdown(["workload", "S4BXI", "s4bxi", "SMPI (MPI)", "s4bxi ÷ S4BXI", "s4bxi ÷ SMPI"], table))

    print("\nSimulated loop time of one run (rank 0's clock; S4BXI and s4bxi run the same program and "
          "should agree to a few ns):\n")
    table = []
    for i, row in enumerate(rows):
        cells = []
        for side in SIDES:
            n, loop = simulated.get((i, side), (None, None))
            cells.append("-" if loop is None else f"{loop * 1e3:.6f} ms ({n} it.)")
        theirs, ours = (simulated.get((i, side), (None, None))[1] for side in SIDES[:2])
        difference = "-" if theirs is None or ours is None else f"{(ours - theirs) * 1e9:.0f} ns"
        table.append([row.label, *cells, difference])
    print(markdown(["workload", "S4BXI", "s4bxi", "SMPI", "s4bxi - S4BXI"], table))

    for label, result in failures:
        print(f"\n{label}: {result.error}")
        if result.detail:
            print("  " + result.detail.replace("\n", "\n  "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
