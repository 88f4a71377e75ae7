#!/usr/bin/env python3
"""Unmodified MPI programs from Debian packages under s4bxi-launch -- mpirun, with the
launcher's Open MPI defaults and --cpu-model zero.

usage: check_debian_programs.py LAUNCHER SOURCE_ROOT PROGRAM

PROGRAM is one of:
  mpi4py     Debian's Python 3 with its mpi4py (package python3-mpi4py) running
             mpi4py_exchange.py on 4 ranks: every rank reports ok from its simulated node
  scalapack  ScaLAPACK's own LU test, xdlu, as Debian builds it against Open MPI (package
             scalapack-mpi-test), on a 2 x 2 process grid: 8 factorizations and solves
             (4 sizes, 2 block sizes; the package's LU.dat cut down), all passing their
             residual checks
  lammps     LAMMPS (package lammps), a Lennard-Jones melt of 2048 atoms for 250 steps on 4
             ranks (ghost atoms exchanged every step, neighbour lists rebuilt, thermo
             reductions): every thermo line printed, total energy conserved to 1 %
  hpcc       the HPC Challenge suite (package hpcc) on 4 ranks, a 2 x 2 grid and a small
             problem (HPL_N below): HPL, PTRANS, RandomAccess (its MPI_Test loops make
             progress between polls), STREAM (its checktick waits for the clock to move),
             FFT, DGEMM and the latency/bandwidth rings all run; HPL's and PTRANS's
             residual checks pass, RandomAccess finds no errors, the summary says Success=1
  hpcc-ppn2  the same with two ranks per simulated node (--ppn 2): the ranks of a node share
             its NIC and PCIe link, and the run's timing differs from hpcc's in ways that
             once left a rank polling for an event already queued but visible later

Both also require that every rank sent messages over the simulated Portals network.
Exit status 0 (pass), 1 (fail), 77 (the package, mpirun or the components missing).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mpi_run_env import launch_environment, missing_components

SKIP = 77
HPL_N = 128  # the HPL problem size, from which HPCC sizes its other tests too
SCALAPACK_TESTS = Path("/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests")
DEBIAN_PYTHON = Path("/usr/bin/python3")  # where Debian's python3-mpi4py is installed


def cut_down_lu_input(original):
    """The package's LU.dat with 4 problem sizes, 2 block sizes, 1 right-hand side and
    the 2 x 2 grid only (its line layout: a count, then the values, then a comment)."""
    lines = original.read_text().split("\n")
    replace = {7: "2\t\t\tnumber of NB's", 9: "1\t\t\tnumber of NRHS's", 11: "1\t\t\tNumber of NBRHS's",
               13: "1\t\t\tnumber of process grids (ordered pairs of P & Q)", 14: "2\t\t\tvalues of P",
               15: "2\t\t\tvalues of Q"}
    for index, text in replace.items():
        lines[index] = text
    return "\n".join(lines)


def hpcc_input():
    """hpccinf.txt: one HPL problem of HPL_N on a 2 x 2 grid, blocks of 32, no extra PTRANS
    sizes (the layout of HPL.dat, then PTRANS's lines)."""
    values = ["HPLinpack benchmark input file", "HPC Challenge under s4bxi", "HPL.out      output file name",
              "6            device out", "1            # of problems sizes (N)", f"{HPL_N}          Ns",
              "1            # of NBs", "32           NBs", "0            PMAP process mapping",
              "1            # of process grids (P x Q)", "2            Ps", "2            Qs",
              "16.0         threshold", "1            # of panel fact", "2            PFACTs",
              "1            # of recursive stopping criterium", "4            NBMINs",
              "1            # of panels in recursion", "2            NDIVs", "1            # of recursive panel fact.",
              "1            RFACTs", "1            # of broadcast", "1            BCASTs",
              "1            # of lookahead depth", "1            DEPTHs", "2            SWAP", "64           swapping threshold",
              "0            L1 in", "0            U  in", "1            Equilibration", "8            memory alignment",
              "##### This line (no. 32) is ignored (it serves as a separator). ######",
              "0            Number of additional problem sizes for PTRANS", "1200         values of N",
              "0            number of additional blocking sizes for PTRANS", "40           values of NB"]
    return "\n".join(values) + "\n"


# A Lennard-Jones melt in reduced units: an fcc lattice heated to T = 2.5 and run at
# constant energy (NVE).
LAMMPS_MELT = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 8 0 8 0 8
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 2.5 5123 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
thermo 50
run 250
"""


def check_lammps(output):
    """Problems in LAMMPS's output (an empty list when the run is complete and conserved
    its energy)."""
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", output, re.MULTILINE)
    steps = [int(r[0]) for r in rows]
    if steps != [0, 50, 100, 150, 200, 250]:
        return [f"thermo steps {steps}, expected 0 to 250 by 50"]
    first, last = float(rows[0][4]), float(rows[-1][4])
    problems = []
    if abs(last - first) > 0.01 * abs(first):
        problems.append(f"total energy went from {first} to {last}")
    if "on 4 procs for 250 steps with 2048 atoms" not in output:
        problems.append("no 'Loop time ... on 4 procs for 250 steps with 2048 atoms' line")
    return problems


def check_hpcc(output):
    """Problems in hpccoutf.txt (an empty list when every test ran and passed)."""
    problems = []
    for section in ("HPL", "PTRANS", "MPIRandomAccess", "StarSTREAM", "SingleSTREAM", "MPIFFT", "StarDGEMM",
                    "LatencyBandwidth", "Summary"):
        if f"End of {section} section." not in output:
            problems.append(f"section {section} did not end")
    if "Success=1" not in output:
        problems.append("the summary does not say Success=1")
    if "FAILED" in output:
        problems.append("a residual check FAILED")
    if not re.search(r"\.\.\.\.\.\. PASSED", output):
        problems.append("HPL's residual check did not pass")
    random_access = re.findall(r"Found (\d+) errors in \d+ locations", output)
    if len(random_access) < 4 or any(int(n) != 0 for n in random_access):
        problems.append(f"RandomAccess errors: {random_access}")
    return problems


def main():
    launcher, source_root, program = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), sys.argv[3]
    if not shutil.which("mpirun"):
        print("SKIP: mpirun not found")
        return SKIP
    missing = missing_components(launcher)
    if missing:
        print(f"SKIP: {missing}")
        return SKIP
    env = launch_environment()
    launch_options = []
    with tempfile.TemporaryDirectory() as d:
        if program == "mpi4py":
            if subprocess.run([str(DEBIAN_PYTHON), "-c", "import mpi4py"], capture_output=True).returncode != 0:
                print("SKIP: Debian's python3-mpi4py is not installed")
                return SKIP
            command = ["mpirun", "-np", "4", str(DEBIAN_PYTHON), str(source_root / "tests/mpi/mpi4py_exchange.py")]
        elif program == "scalapack":
            if not (SCALAPACK_TESTS / "xdlu").exists():
                print("SKIP: ScaLAPACK's tests are not installed (package scalapack-mpi-test)")
                return SKIP
            Path(d, "LU.dat").write_text(cut_down_lu_input(SCALAPACK_TESTS / "LU.dat"))
            command = ["mpiexec", "-n", "4", str(SCALAPACK_TESTS / "xdlu")]
        elif program == "lammps":
            if not shutil.which("lmp"):
                print("SKIP: LAMMPS is not installed (package lammps)")
                return SKIP
            Path(d, "in.melt").write_text(LAMMPS_MELT)
            command = ["mpirun", "-np", "4", "lmp", "-in", "in.melt", "-log", "none"]
        elif program in ("hpcc", "hpcc-ppn2"):
            if not shutil.which("hpcc"):
                print("SKIP: HPCC is not installed (package hpcc)")
                return SKIP
            Path(d, "hpccinf.txt").write_text(hpcc_input())
            command = ["mpirun", "-np", "4", "hpcc"]
            if program == "hpcc-ppn2":
                launch_options = ["--ppn", "2"]
        else:
            print(f"check_debian_programs.py: unknown program {program}", file=sys.stderr)
            return 2
        summary_path = os.path.join(d, "run.json")
        command = [str(launcher), "-q", "--cpu-model", "zero", "--timeout", "240", "--summary", summary_path,
                   *launch_options, "--"] + command
        print("$", " ".join(command), flush=True)
        run = subprocess.run(command, env=env, cwd=d, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=300)
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
        if run.returncode != 0:
            print(f"FAIL: status {run.returncode}", file=sys.stderr)
            return 1
        summary = json.load(open(summary_path))
        hpcc_output = Path(d, "hpccoutf.txt").read_text() if program.startswith("hpcc") else ""
    quiet = [r["rank"] for r in summary["ranks"] if r["messages_sent"] == 0]
    if summary["status"] != "ok" or summary["world_size"] != 4 or quiet:
        print(f"FAIL: run summary {summary['status']}, {summary['world_size']} ranks, ranks {quiet} sent nothing "
              "over simulated Portals", file=sys.stderr)
        return 1
    nodes = [r["node"] for r in sorted(summary["ranks"], key=lambda r: r["rank"])]
    expected_nodes = ["node0", "node0", "node1", "node1"] if program == "hpcc-ppn2" else [f"node{i}" for i in range(4)]
    if nodes != expected_nodes:
        print(f"FAIL: ranks 0 to 3 ran on {nodes}, not {expected_nodes}", file=sys.stderr)
        return 1
    if program == "mpi4py":
        ok = set(re.findall(r"rank (\d) of 4 on node(\d): ok", run.stdout))
        if ok != {(str(r), str(r)) for r in range(4)}:
            print(f"FAIL: ranks that reported ok from their own node: {sorted(ok)}", file=sys.stderr)
            return 1
    elif program == "lammps":
        problems = check_lammps(run.stdout)
        if problems:
            print("FAIL: LAMMPS: " + "; ".join(problems), file=sys.stderr)
            return 1
    elif program.startswith("hpcc"):
        problems = check_hpcc(hpcc_output)
        if problems:
            print("FAIL: HPCC: " + "; ".join(problems) + "\n--- hpccoutf.txt (end) ---\n" + hpcc_output[-3000:],
                  file=sys.stderr)
            return 1
    else:
        passed = re.search(r"(\d+) tests completed and passed residual checks", run.stdout)
        failed = re.search(r"(\d+) tests completed and failed residual checks", run.stdout)
        if not passed or int(passed.group(1)) != 8 or not failed or int(failed.group(1)) != 0:
            print("FAIL: ScaLAPACK did not report 8 passed and 0 failed tests", file=sys.stderr)
            return 1
    print(f"ok: {program}, simulated makespan {summary['makespan']:.6f} s, {summary['portals_ops']} Portals operations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
