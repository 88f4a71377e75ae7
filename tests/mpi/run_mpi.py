#!/usr/bin/env python3
"""Runs one MPI test program of this folder with Debian's mpirun under s4bxi-launch.

usage: run_mpi.py LAUNCHER PROGRAM_DIR SOURCE_ROOT CASE [--skip REASON] [--repeat N] [--network-model M]

CASE is PROGRAM:CONFIGURATION:RANKS:RANKS_PER_NODE, e.g. p2p:portals:4:1, or
determinism:PROGRAM:CONFIGURATION:RANKS:RANKS_PER_NODE, or
interrupted:PROGRAM:CONFIGURATION:RANKS:RANKS_PER_NODE. PROGRAM is p2p, coll, rma, threads,
progress, node or init_thread (mpi_p2p, mpi_coll, mpi_rma, mpi_threads, mpi_progress, mpi_node,
mpi_init_thread). The configurations (explicit --mca options):

  default     nothing but `mpirun -np N program`: the launcher's own Open MPI settings
              (docs/openmpi.md), which users get; the run must move its data over
              simulated Portals
  portals     pml cm + mtl portals4, osc portals4, coll/portals4 first (then tuned, libnbc,
              basic for what it does not offload): everything over the simulated Portals NIC
  portals-sw  pml cm + mtl portals4, but collectives in software (coll ^portals4) and RMA
              over point-to-point (osc pt2pt): the Portals MTL only
  btl         pml ob1 + btl self,portals4 (Open MPI's byte transfer layer over Portals, with
              its own eager/rendezvous protocols), osc pt2pt and collectives over it
  tcp         pml ob1 + btl self,tcp, osc pt2pt, no Portals component: the stock transport
              (its messages do not cross the simulated network). mpi_yield_when_idle: a rank
              that polls TCP without yielding looks busy to the simulation, which then waits
              for it (tens of seconds for the 2-rank p2p run without it)

Except with "default", every option that matters is given on the mpirun line, which wins
over the launcher's own Open MPI defaults (docs/openmpi.md). A run passes when the launcher exits 0, the program printed "<program>: ok" (it checks its
own results), and the run summary has every rank finished on the expected nodes. For p2p over
Portals, the program also asserts simulated times derived from the model
(tests/testkit/model.py). A determinism case runs twice under --cpu-model zero and
requires byte-identical program output and the same run summary (every simulated figure:
end times, time in Portals, operations, messages, bytes; not the wall time). An
interrupted case does the same, but its second run has its ranks stopped (SIGSTOP) for
kStopSeconds at random moments, as a loaded machine deschedules them: simulated results
must not depend on how the host shares its cores.

Known limits, passed to the programs (docs/openmpi.md):
- coll/portals4 offloads MPI_LONG reductions as byte-wise PTL_INT8_T atomics (an upstream
  bug in its datatype table): with "portals", mpi_coll tests MPI_INT and MPI_DOUBLE only;
  "portals-sw" tests MPI_LONG.
- coll/portals4's non-blocking collectives complete with a request status it never sets
  (uninitialised memory from its free list: MPI_Wait fails as soon as malloc'd memory is not
  zero, e.g. under meson's MALLOC_PERTURB_): with "portals", mpi_coll runs
  --no-nonblocking; "portals-sw" and "tcp" test them through coll libnbc.
- osc pt2pt (the "portals-sw", "btl" and "tcp" configurations) is not re-entrant: a target
  that serves several ranks' MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Get_accumulate
  under lock_all can take a lock it already holds, from a reply's send that progresses into
  the next request, and spin for ever (seen with "btl"): mpi_rma runs --no-atomics there.

Exit status 0 (pass), 1 (fail) or 77 (skipped: mpicc, mpirun or the components missing).
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command  # noqa: E402
from testkit.mpi_env import launch_environment  # noqa: E402
from testkit import run_summary  # noqa: E402

SKIP = 77
DEBIAN_COMPONENTS = "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3"

CONFIGURATIONS = {
    "default": [],
    "portals": ["--mca", "pml", "cm", "--mca", "mtl", "portals4", "--mca", "osc", "portals4",
                "--mca", "coll", "portals4,tuned,libnbc,basic,inter,self", "--mca", "btl", "self,tcp"],
    "portals-sw": ["--mca", "pml", "cm", "--mca", "mtl", "portals4", "--mca", "osc", "pt2pt",
                   "--mca", "coll", "^portals4", "--mca", "btl", "self,tcp"],
    "btl": ["--mca", "pml", "ob1", "--mca", "btl", "self,portals4", "--mca", "mtl", "^portals4", "--mca", "osc", "pt2pt",
            "--mca", "coll", "^portals4"],
    "tcp": ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca", "mtl", "^portals4",
            "--mca", "osc", "pt2pt", "--mca", "coll", "^portals4", "--mca", "mpi_yield_when_idle", "1"],
}

# Program arguments that keep known problems out of a configuration (see above).
PROGRAM_ARGUMENTS = {
    ("coll", "portals"): ["--types", "MPI_INT,MPI_DOUBLE", "--no-nonblocking"],
    ("rma", "portals-sw"): ["--no-atomics"],
    ("rma", "btl"): ["--no-atomics"],
    ("rma", "tcp"): ["--no-atomics"],
}
# For interrupted cases: a busy-wait of 200 ms (about 2 million clock readings) that the
# interruptions have time to fall in.
INTERRUPTED_ARGUMENTS = {"progress": ["4096", "0.2"]}


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def components_dir(source_root):
    """Open MPI's Portals components, built or found in the cache by the project's script
    (its last line of stdout is the directory)."""
    script = source_root / "tools" / "build-openmpi-portals4"
    try:
        run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise Skip("tools/build-openmpi-portals4 did not finish in 600 s")
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines or not Path(lines[-1]).is_dir():
        raise Skip(f"Open MPI's Portals components are not available:\n{run.stderr[-2000:]}")
    return lines[-1]


def debian_components():
    """Open MPI's own component directory (ompi_info's pkglibdir)."""
    try:
        out = subprocess.run(["ompi_info", "--path", "pkglibdir", "--parsable"], capture_output=True, text=True,
                             timeout=60).stdout
        for line in out.splitlines():
            if line.startswith("path:pkglibdir:"):
                return line.split(":", 2)[2]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return DEBIAN_COMPONENTS


def model_bounds(source_root):
    """Lower bounds of simulated times between two nodes, from the model's formulas."""
    from testkit import model

    platform = model.Platform()
    # A 0-byte MPI message is at least one Portals put: from the call to the target's event.
    one_way = platform.put_to_target_event(0) * 1e9
    # 4 MiB cross the network at the link bandwidth at best.
    four_mib = platform.network(4 << 20) * 1e9
    return ["--min-one-way-ns", f"{one_way:.3f}", "--min-4mib-ns", f"{four_mib:.3f}"]


# Interruptions of an interrupted case: longer than the interposer's 10 ms without CPU after
# which a rank's clock reading asks the server whether time ran without it, shorter than
# the server's 20 ms after which a rank that sleeps is taken to be blocked outside.
kStopSeconds = 0.014
kRunSeconds = (0.01, 0.04)  # between two interruptions of a rank


def descendants(root):
    """Process ids under `root`, with their command names."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(parent, []).append((int(entry), name))
    found, todo = [], [root]
    while todo:
        for pid, name in children.get(todo.pop(), []):
            found.append((pid, name))
            todo.append(pid)
    return found


class Interruptions:
    """While active, stops the processes named `name` under `root` for kStopSeconds, each
    at random moments (a seeded generator: the same pattern of pauses from run to run,
    though not at the same points of the program)."""

    def __init__(self, root, name):
        self.root, self.name = root, name[:15]  # the kernel keeps 15 characters of a name
        self.done = threading.Event()
        self.count = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def run(self):
        chance = random.Random(4)
        while not self.done.wait(chance.uniform(*kRunSeconds)):
            ranks = [pid for pid, name in descendants(self.root) if name == self.name]
            stopped = [pid for pid in ranks if chance.random() < 0.5]
            for pid in stopped:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    pass
            self.done.wait(kStopSeconds)
            for pid in stopped:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            self.count += len(stopped)


def run_once(launcher, program, configuration, ranks, ppn, components, program_args, cpu_model=None,
             interrupted=False, launcher_options=()):
    env = launch_environment()
    mpirun = ["mpirun", "-np", str(ranks)]
    if configuration != "default":
        mpirun.append("--oversubscribe")
        if os.geteuid() == 0:
            mpirun.append("--allow-run-as-root")
        mpirun += CONFIGURATIONS[configuration]
        mpirun += ["--mca", "mca_base_component_path", f"{components}:{debian_components()}"]
    mpirun += [str(program)] + program_args
    with tempfile.TemporaryDirectory() as d:
        summary_path = os.path.join(d, "run.json")
        line = command(launcher, *mpirun, ranks=None, cpu_model=cpu_model, timeout=120,
                       options=("--ppn", ppn, *launcher_options),
                       summary=summary_path, separate=True)
        print("$", " ".join(line), flush=True)
        # Its own wait, not testkit.launch.run: Interruptions stops and resumes the ranks meanwhile.
        with subprocess.Popen(line, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            try:
                if interrupted:
                    with Interruptions(proc.pid, program.name) as interruptions:
                        stdout, stderr = proc.communicate(timeout=200)
                    print(f"{interruptions.count} interruptions of {kStopSeconds * 1000:.0f} ms", flush=True)
                else:
                    stdout, stderr = proc.communicate(timeout=200)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
        summary = None
        if os.path.exists(summary_path):
            with open(summary_path) as f:
                summary = json.load(f)
    print(f"status {proc.returncode}\n--- stdout\n{stdout}--- stderr\n{stderr}---", flush=True)
    name = program.name
    check(proc.returncode == 0, f"{name}: exit status {proc.returncode}")
    check(f"{name}: ok\n" in stdout, f"{name}: no '{name}: ok' line")
    check(summary is not None and summary.get("status") == "ok", f"run summary: {summary and summary.get('status')}")
    check(summary["world_size"] == ranks, f"world size {summary['world_size']}, expected {ranks}")
    nodes = {r["node"] for r in summary["ranks"]}
    check(all(r["finished"] for r in summary["ranks"]), "a rank did not finish")
    check(len(nodes) == (ranks + ppn - 1) // ppn, f"ranks on nodes {sorted(nodes)}, expected {ranks} / {ppn}")
    if configuration != "tcp":  # every byte between ranks crosses the simulated network
        quiet = [r["rank"] for r in summary["ranks"] if r["messages_sent"] == 0]
        check(not quiet, f"ranks {quiet} sent no message over simulated Portals")
    print(f"simulated makespan {summary['makespan']:.9f} s, {summary['portals_ops']} Portals operations, "
          f"{summary['bytes_moved']} bytes moved", flush=True)
    return stdout, summary


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    launcher, program_dir, source_root, case = Path(argv[1]), Path(argv[2]), Path(argv[3]), argv[4]
    options = argv[5:]
    repeat = 1
    if "--repeat" in options:
        repeat = int(options[options.index("--repeat") + 1])
    try:
        if "--skip" in options:
            raise Skip(options[options.index("--skip") + 1])
        interrupted = case.startswith("interrupted:")
        determinism = interrupted or case.startswith("determinism:")
        fields = case.split(":")[1:] if determinism else case.split(":")
        if len(fields) != 4 or fields[1] not in CONFIGURATIONS:
            print(f"run_mpi.py: bad case '{case}'", file=sys.stderr)
            return 2
        name, configuration, ranks, ppn = fields[0], fields[1], int(fields[2]), int(fields[3])
        program = program_dir / f"mpi_{name}"
        if not program.exists():
            raise Skip(f"{program} was not built")
        if not shutil.which("mpirun"):
            raise Skip("mpirun was not found")
        components = components_dir(source_root)
        program_args = list(PROGRAM_ARGUMENTS.get((name, configuration), []))
        if interrupted:
            program_args += INTERRUPTED_ARGUMENTS.get(name, [])
        # --network-model M: the run's network model (docs/network-models.md); the simulated times
        # p2p asserts are the detailed model's, and are not asserted under another.
        network_model = options[options.index("--network-model") + 1] if "--network-model" in options else None
        launcher_options = ("--network-model", network_model) if network_model else ()
        if name == "p2p" and configuration != "tcp" and not network_model:
            program_args += model_bounds(source_root)
        for _ in range(repeat):
            if determinism:
                first, first_summary = run_once(launcher, program, configuration, ranks, ppn, components,
                                                program_args, "zero", launcher_options=launcher_options)
                second, second_summary = run_once(launcher, program, configuration, ranks, ppn, components,
                                                  program_args, "zero", interrupted, launcher_options)
                check(first == second, "two runs under --cpu-model zero printed different output")
                if run_summary.simulated_part(first_summary) != run_summary.simulated_part(second_summary):
                    raise Failure("two runs under --cpu-model zero have different run summaries:\n  " +
                                  run_summary.why_runs_differ(first_summary, second_summary, most=None,
                                                              separator="\n  "))
            else:
                run_once(launcher, program, configuration, ranks, ppn, components, program_args,
                         launcher_options=launcher_options)
    except Skip as e:
        print(f"SKIP {case}: {e}")
        return SKIP
    except Failure as e:
        print(f"FAIL {case}: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL {case}: no answer in {e.timeout} s", file=sys.stderr)
        return 1
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
