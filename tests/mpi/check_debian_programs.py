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
  mumps      MUMPS's simple test (package mumps-test), a 5 x 5 system factorised and solved
             on 4 ranks, its input on mpirun's standard input: the solution is 1 2 3 4 5
  nwchem     NWChem (package nwchem-openmpi; Global Arrays over ARMCI-MPI, MPI-3 one-sided
             operations): the SCF energy of water in 6-31G* on 4 ranks equals a native
             one-rank run's to 1e-7 hartree
  quantum-espresso
             Quantum ESPRESSO's pw.x (packages quantum-espresso, quantum-espresso-data):
             the SCF energy of bulk silicon on 4 ranks (plane waves and FFT grid
             distributed) equals a native one-rank run's to 1e-6 Ry
  gromacs    GROMACS's gmx_mpi (package gromacs): 100 steps of a box of 1696 SPC waters
             (prepared with the serial gmx, outside the simulation) with PME, on 4 ranks;
             the run finishes, conserves its energy to 0.1 %, holds 300 K, and its
             simulated makespan stays under 0.2 s (FFTW plans its FFTs by timing them)

Each run also requires that every rank sent messages over the simulated Portals network
and ran on the simulated node --ppn puts it on.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402
from testkit.mpi_env import launch_environment, missing_components, native_environment  # noqa: E402

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


# GROMACS: a box of SPC water (two tiles of the package's equilibrated spc216.gro each
# way), 100 steps of 2 fs with PME electrostatics and a thermostat at 300 K; its FFTs are
# planned with FFTW_MEASURE at start-up.
GROMACS_BOX_NM = 3.72412
GROMACS_MDP = """integrator = md
dt = 0.002
nsteps = 100
cutoff-scheme = Verlet
nstlist = 10
rcoulomb = 0.9
rvdw = 0.9
coulombtype = PME
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
constraints = h-bonds
nstenergy = 25
nstlog = 25
gen-vel = yes
gen-temp = 300
gen-seed = 4711
"""
# A loose bound on the simulated makespan: 100 steps of a few thousand atoms under the zero
# CPU model are the network's time alone (about 11 MiB per rank, a few milliseconds at the
# links' 11 GB/s), and FFTW's planning adds at most 100 us per 1000 clock readings
# (docs/time.md). Clock-spin steps that grew without bound took it to 1.7 s on this input,
# and to 10^9 s on a smaller box.
GROMACS_MAX_MAKESPAN = 0.2
MUMPS_TESTS = Path("/usr/lib/mumps")

# NWChem: the SCF energy of a water molecule in the 6-31G* basis, on 4 ranks under the
# simulation, against the same input run natively on one rank.
NWCHEM_INPUT = """start h2o
title "water SCF"
geometry units angstroms
  O  0.000  0.000  0.000
  H  0.757  0.586  0.000
  H -0.757  0.586  0.000
end
basis
  * library 6-31g*
end
scf
  thresh 1e-8
end
task scf energy
"""
NWCHEM_TOLERANCE = 1e-7  # hartree: the SCF converges its energy far below this
NWCHEM_ENERGY = re.compile(r"Total SCF energy =\s+(-?\d+\.\d+)")


def native_reference(input_name, text, command, energy, what):
    """A program checked against a native one-rank run of the same input: prepare writes
    the input, runs `command` on one rank outside the simulation and keeps the energy it
    printed (`energy`, a regular expression); returns None or why it could not."""
    def prepare(directory):
        Path(directory, input_name).write_text(text)
        native = Path(directory, "native")
        native.mkdir()
        Path(native, input_name).write_text(text)
        run = subprocess.run(["mpirun", "-np", "1"] + command, cwd=native, env=native_environment(),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        found = energy.search(run.stdout)
        if run.returncode != 0 or not found:
            return (f"the native one-rank {what} run failed (status {run.returncode}): "
                    f"{run.stdout[-1500:]}{run.stderr[-1500:]}")
        Path(directory, "native_energy").write_text(found.group(1))
        return None
    return prepare


def same_energy(energy, tolerance, what):
    """The check of a native_reference() program: the energy printed under the simulation
    is the native run's, to `tolerance`."""
    def check(output, directory):
        found = energy.search(output)
        if not found:
            return [f"no {what} line"]
        native = float(Path(directory, "native_energy").read_text())
        if abs(float(found.group(1)) - native) > tolerance:
            return [f"{what} {found.group(1)}, {native} natively on one rank"]
        return []
    return check


# Quantum ESPRESSO's pw.x: a self-consistent field calculation of bulk silicon (the
# two-atom diamond cell, LDA, 18 Ry cut-off, a 4 x 4 x 4 k-point grid) with the package's
# own pseudopotential. Its 4 ranks share the plane waves and the FFT grid: all-to-alls
# and reductions in every iteration.
QE_PSEUDO_DIR = Path("/usr/share/espresso/pseudo")
QE_INPUT = f"""&control
  calculation = 'scf', prefix = 'si', outdir = './out', pseudo_dir = '{QE_PSEUDO_DIR}/'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 18.0
/
&electrons
  conv_thr = 1.0d-8
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
"""
QE_TOLERANCE = 1e-6  # Ry: the run converges to 1e-8 Ry and prints 8 decimals
QE_ENERGY = re.compile(r"^!\s+total energy\s+=\s+(-?\d+\.\d+) Ry", re.MULTILINE)


def prepare_gromacs(directory):
    """Writes md.tpr with Debian's serial gmx (outside the simulation); returns None, or
    why it could not."""
    def gmx(*args):
        run = subprocess.run(["gmx", "-quiet", *args], cwd=directory, capture_output=True, text=True)
        return None if run.returncode == 0 else f"gmx {args[0]} failed: {run.stderr[-2000:]}"
    box = [str(GROMACS_BOX_NM)] * 3
    problem = gmx("solvate", "-cs", "spc216.gro", "-box", *box, "-o", "water.gro")
    if problem:
        return problem
    atoms = len(Path(directory, "water.gro").read_text().splitlines()) - 3
    Path(directory, "topol.top").write_text('#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spc.itp"\n'
                                            f"[ system ]\nwater\n[ molecules ]\nSOL {atoms // 3}\n")
    Path(directory, "md.mdp").write_text(GROMACS_MDP)
    return gmx("grompp", "-f", "md.mdp", "-c", "water.gro", "-p", "topol.top", "-o", "md.tpr")


def check_gromacs(log):
    """Problems in GROMACS's md.log (an empty list when the run finished with its energy
    conserved and its temperature held)."""
    if "Finished mdrun" not in log:
        return ["md.log does not say Finished mdrun"]
    log = log.split("A V E R A G E S")[0]
    rows = re.findall(r"Total Energy  Conserved En\.    Temperature.*\n\s*(\S+)\s+(\S+)\s+(\S+)", log)
    if len(rows) != 5:
        return [f"{len(rows)} energy rows in md.log, expected 5 (steps 0 to 100 by 25)"]
    conserved = [float(r[1]) for r in rows]
    problems = []
    if max(conserved) - min(conserved) > 1e-3 * abs(conserved[0]):
        problems.append(f"conserved energy moved by more than 0.1 %: {conserved}")
    temperature = float(rows[-1][2])
    if not 270.0 < temperature < 330.0:
        problems.append(f"temperature {temperature} K at the last step, thermostat at 300 K")
    return problems


def check_mumps(output):
    """Problems in MUMPS's simple test output (its solution should be 1 2 3 4 5)."""
    found = re.search(r"Solution is\s+((?:\S+\s+){5})", output)
    if not found:
        return ["no 'Solution is' line"]
    solution = [float(x) for x in found.group(1).split()]
    if any(abs(x - expected) > 1e-9 for x, expected in zip(solution, range(1, 6))):
        return [f"solution {solution}, expected 1 2 3 4 5"]
    return []


def check_scalapack(output):
    passed = re.search(r"(\d+) tests completed and passed residual checks", output)
    failed = re.search(r"(\d+) tests completed and failed residual checks", output)
    if not passed or int(passed.group(1)) != 8 or not failed or int(failed.group(1)) != 0:
        return ["ScaLAPACK did not report 8 passed and 0 failed tests"]
    return []


def check_mpi4py(output):
    ok = set(re.findall(r"rank (\d) of 4 on node(\d): ok", output))
    if ok != {(str(r), str(r)) for r in range(4)}:
        return [f"ranks that reported ok from their own node: {sorted(ok)}"]
    return []


def mpi4py_missing():
    if subprocess.run([str(DEBIAN_PYTHON), "-c", "import mpi4py"], capture_output=True).returncode != 0:
        return "Debian's python3-mpi4py is not installed"
    return None


def missing_file(path, package):
    return None if Path(path).exists() else f"{path} is missing (package {package})"


def missing_command(command, package):
    return None if shutil.which(command) else f"{command} is not installed (package {package})"


def writes(name, text):
    """A program's preparation that writes one input file, text() into `name`."""
    def prepare(directory):
        Path(directory, name).write_text(text())
    return prepare


def check_hpcc_output(directory):
    output = Path(directory, "hpccoutf.txt").read_text()
    problems = check_hpcc(output)
    if problems:
        print("--- hpccoutf.txt (end) ---\n" + output[-3000:])
    return problems


def hpcc_program(ppn):
    return {
        "missing": lambda: missing_command("hpcc", "hpcc"),
        "prepare": writes("hpccinf.txt", hpcc_input),
        "command": lambda root: ["mpirun", "-np", "4", "hpcc"],
        "check": lambda out, d: check_hpcc_output(d),
        "ppn": ppn,
    }


# For each program: what it needs, its input (prepare returns None or a problem), its
# command line, how its results are checked, and how many ranks run on each node.
PROGRAMS = {
    "mpi4py": {
        "missing": mpi4py_missing,
        "command": lambda root: ["mpirun", "-np", "4", str(DEBIAN_PYTHON), str(root / "tests/mpi/mpi4py_exchange.py")],
        "check": lambda out, d: check_mpi4py(out),
    },
    "scalapack": {
        "missing": lambda: missing_file(SCALAPACK_TESTS / "xdlu", "scalapack-mpi-test"),
        "prepare": writes("LU.dat", lambda: cut_down_lu_input(SCALAPACK_TESTS / "LU.dat")),
        "command": lambda root: ["mpiexec", "-n", "4", str(SCALAPACK_TESTS / "xdlu")],
        "check": lambda out, d: check_scalapack(out),
    },
    "lammps": {
        "missing": lambda: missing_command("lmp", "lammps"),
        "prepare": writes("in.melt", lambda: LAMMPS_MELT),
        "command": lambda root: ["mpirun", "-np", "4", "lmp", "-in", "in.melt", "-log", "none"],
        "check": lambda out, d: check_lammps(out),
    },
    "hpcc": hpcc_program(1),
    "hpcc-ppn2": hpcc_program(2),
    "mumps": {
        "missing": lambda: missing_file(MUMPS_TESTS / "dsimpletest", "mumps-test"),
        "command": lambda root: ["mpirun", "-np", "4", str(MUMPS_TESTS / "dsimpletest")],
        "stdin": MUMPS_TESTS / "input_simpletest_real",
        "check": lambda out, d: check_mumps(out),
    },
    "nwchem": {
        "missing": lambda: missing_command("nwchem.openmpi", "nwchem-openmpi"),
        "prepare": native_reference("h2o.nw", NWCHEM_INPUT, ["nwchem.openmpi", "h2o.nw"], NWCHEM_ENERGY, "NWChem"),
        "command": lambda root: ["mpirun", "-np", "4", "nwchem.openmpi", "h2o.nw"],
        "check": same_energy(NWCHEM_ENERGY, NWCHEM_TOLERANCE, "Total SCF energy"),
    },
    "quantum-espresso": {
        "missing": lambda: (missing_command("pw.x", "quantum-espresso") or
                            missing_file(QE_PSEUDO_DIR / "Si.pz-vbc.UPF", "quantum-espresso-data")),
        "prepare": native_reference("si.in", QE_INPUT, ["pw.x", "-in", "si.in"], QE_ENERGY, "pw.x"),
        "command": lambda root: ["mpirun", "-np", "4", "pw.x", "-in", "si.in"],
        "check": same_energy(QE_ENERGY, QE_TOLERANCE, "total energy"),
    },
    "gromacs": {
        "missing": lambda: missing_command("gmx", "gromacs") or missing_command("gmx_mpi", "gromacs"),
        "prepare": prepare_gromacs,
        "command": lambda root: ["mpirun", "-np", "4", "gmx_mpi", "-quiet", "mdrun", "-s", "md.tpr", "-deffnm", "md",
                                 "-ntomp", "1"],
        "check": lambda out, d: check_gromacs(Path(d, "md.log").read_text()),
        "max_makespan": GROMACS_MAX_MAKESPAN,
    },
}


def run_program(launcher, source_root, program, directory):
    """Runs the program under s4bxi-launch; returns (problems, summary)."""
    problem = program.get("prepare", lambda d: None)(directory)
    if problem:
        return [problem], None
    summary_path = os.path.join(directory, "run.json")
    ppn = program.get("ppn", 1)
    line = command(launcher, *program["command"](source_root), ranks=None, timeout=240, options=("--ppn", ppn),
                   summary=summary_path, separate=True)
    print("$", " ".join(line), flush=True)
    with open(program.get("stdin", os.devnull)) as stdin:
        run = run_command(line, wall_timeout=300, env=launch_environment(), cwd=directory, stdin=stdin)
    print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
    if run.returncode != 0:
        return [f"status {run.returncode}"], None
    summary = json.load(open(summary_path))
    problems = []
    quiet = [r["rank"] for r in summary["ranks"] if r["messages_sent"] == 0]
    if summary["status"] != "ok" or summary["world_size"] != 4 or quiet:
        problems.append(f"run summary {summary['status']}, {summary['world_size']} ranks, ranks {quiet} sent "
                        "nothing over simulated Portals")
    nodes = [r["node"] for r in sorted(summary["ranks"], key=lambda r: r["rank"])]
    expected_nodes = [f"node{rank // ppn}" for rank in range(4)]
    if nodes != expected_nodes:
        problems.append(f"ranks 0 to 3 ran on {nodes}, not {expected_nodes}")
    if summary["makespan"] > program.get("max_makespan", float("inf")):
        problems.append(f"simulated makespan {summary['makespan']} s, more than {program['max_makespan']} s")
    problems += program["check"](run.stdout, directory)
    return problems, summary


def main():
    launcher, source_root, name = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), sys.argv[3]
    program = PROGRAMS.get(name)
    if program is None:
        print(f"check_debian_programs.py: unknown program {name} (known: {', '.join(PROGRAMS)})", file=sys.stderr)
        return 2
    missing = None if shutil.which("mpirun") else "mpirun not found"
    missing = missing or missing_components(launcher) or program["missing"]()
    if missing:
        print(f"SKIP: {missing}")
        return SKIP
    with tempfile.TemporaryDirectory() as directory:
        problems, summary = run_program(launcher, source_root, program, directory)
    if problems:
        print(f"FAIL: {name}: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"ok: {name}, simulated makespan {summary['makespan']:.6f} s, {summary['portals_ops']} Portals operations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
