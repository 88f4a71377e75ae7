#!/usr/bin/env python3
"""Runs whose ranks are on several machines (docs/multi-host.md, issue #45) against the same
jobs on one machine, on namespace machines (testkit/machines.py). Every run is
`s4bxi-launch -q --cpu-model zero --timeout S -- mpirun ...` started inside m0; across
machines with `--listen <m0's address>` and `mpirun --hostfile H --map-by node` (the ranks
dealt to the machines in turn). A run across machines must end like the one-machine run
(status 0, its program's line), show each other machine joining the run, and write the
same run summary less the host's figures (testkit.run_summary.host_independent).

1. stock Open MPI: mpi_coll on 4 ranks across 2 machines and across 4 (one rank each),
   mpi_allreduce on 2 ranks across 2 machines, directly and through a wrapper that execs it
   (each rank registers, then re-attaches);
2. raw Portals bootstrapped through PMI-1 from a library of their own, as on a cluster
   whose process manager has one: pmi_pingpong.c (2 ranks, 8 B and 64 KiB) and
   pmi_allreduce.c (2 ranks across 2 machines, 4 across 4), linked with pmi_over_pmix.c
   (PMI-1 over mpirun's PMIx), to which libportals leaves PMI-1 when it is loaded;
3. Sandia OpenSHMEM (unmodified unit tests, which bootstrap through PMI-1, answered by the
   simulation under mpirun as under s4bxi-launch -n): rma_coverage on 2 ranks across 2
   machines, shmem_team_reduce on 4 across 2 and 4, and shmem_test (which waits on its
   memory) exec'd by a wrapper on 2 ranks across 2;
4. direct time system calls (the seccomp trap, answered by the agent on a rank's machine):
   tests/integration/time/direct_syscalls --exact on 2 ranks across 2 machines, which sleep
   and read the clock by syscall and check it moved by exactly what they slept, in no real
   time;
5. a machine lost: the agent of m1 killed (SIGKILL) while mpi_allreduce's 4 ranks run
   across 2 machines: the launcher must exit non-zero within the run's --timeout, its
   stderr naming m1 and the ranks that were there, and no agent, server, launcher, mpirun,
   orted or rank may be left in any machine.

Exit status 0 on success, 1 on failure, 77 when machines cannot be built here or Open MPI's
Portals components, mpirun or the programs are missing; 77 too, once steps 1, 2, 4 and 5
have passed, when SOS is not built (step 3 could not run).

usage: check_across_machines.py LAUNCHER BUILD_DIR [--sos PREFIX] [--skip REASON]"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: testkit
from testkit.launch import environment  # noqa: E402
from testkit.findings import Check  # noqa: E402
from testkit.machines import Machines, kill_tree, skip_reason  # noqa: E402
from testkit.mpi_env import missing_components, root_consent  # noqa: E402
from testkit.run_summary import differences, host_decisions, host_independent, load  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402

SKIP = 77
MACHINES = 4
RUN_TIMEOUT = 120  # s, the launcher's --timeout for a run (a loaded 2-core host)
WALL_MARGIN = 30  # s past it before the harness kills the launcher itself
LOST_RUN_TIMEOUT = 60  # s, the --timeout of step 5's run
# Step 5's program: enough rounds to outlast the kill by far (20 rounds take ~1 ms of wall time a round).
LOST_ROUNDS = 200000
# What must not outlive a run, in any machine (names as /proc/PID/comm gives them: 15 characters at most).
RUN_PROCESSES = {"s4bxi-agent", "s4bxi-simkernel", "s4bxi-launch", "mpirun", "mpiexec", "orted", "prted", "prte"}
PROCESSES = """import os
for pid in os.listdir("/proc"):
    if pid.isdigit() and pid != str(os.getpid()):
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            line = " ".join(open(f"/proc/{pid}/cmdline").read().replace("\\0", " ").split())
        except OSError:
            continue
        print(pid, comm, line[:160], sep="\\t")
"""


class Runs:
    """The launcher's runs inside m0, on one machine or across the first `count` machines."""

    def __init__(self, launcher, machines):
        self.launcher, self.machines = launcher, machines
        self.m0 = machines[0]
        self.env = {**environment(mpi=True), **root_consent(), "OMPI_MCA_plm_rsh_agent": str(machines.rsh_agent)}
        self.references = {}
        self.serial = 0

    def hostfile(self, count, slots):
        path = self.machines.shared / f"hosts-{count}x{slots}"
        path.write_text("".join(f"{m.name} slots={slots}\n" for m in self.machines[:count]))
        return path

    def line(self, name, program, ranks, count, timeout, arguments=()):
        """The launcher's command line for `program` on `ranks` ranks over `count` machines
        (1: m0 alone, no listener), its summary `name`.json in the shared folder."""
        summary = self.machines.shared / f"{name}.json"
        summary.unlink(missing_ok=True)
        line = [self.launcher, "-q", "--cpu-model", "zero", "--timeout", str(timeout), "--summary", str(summary)]
        mpirun = ["mpirun", "-np", str(ranks)]
        if count > 1:
            line += ["--listen", self.m0.address]
            mpirun += ["--hostfile", str(self.hostfile(count, -(-ranks // count))), "--map-by", "node"]
        return line + ["--"] + mpirun + [str(program), *map(str, arguments)], summary

    def run(self, program, ranks, count, arguments=(), env=None):
        """Runs it; the finished process with `wall` (s), `summary` (host_independent, or
        None), `whole` (the summary as written) and `timed_out`."""
        self.serial += 1
        name = f"{self.serial:02d}-{Path(program).name}-{ranks}r-{count}m"
        line, summary = self.line(name, program, ranks, count, RUN_TIMEOUT, arguments)
        started = time.monotonic()
        try:
            done = self.m0.run(line, capture_output=True, text=True, errors="replace",
                               timeout=RUN_TIMEOUT + WALL_MARGIN, env={**self.env, **(env or {})})
            done.timed_out = False
        except subprocess.TimeoutExpired as expired:
            done = subprocess.CompletedProcess(line, None, _text(expired.stdout), _text(expired.stderr))
            done.timed_out = True
        done.wall = time.monotonic() - started
        done.whole, done.summary = load(summary), host_independent(summary)
        return done

    def reference(self, program, ranks, arguments=(), env=None):
        """The one-machine run of `program` on `ranks` ranks, run once."""
        key = (str(program), ranks, tuple(arguments), tuple(sorted((env or {}).items())))
        if key not in self.references:
            self.references[key] = self.run(program, ranks, 1, arguments, env)
        return self.references[key]


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def tail(text, lines=12):
    return "\n      ".join(text.strip().splitlines()[-lines:]) or "(nothing)"


def describe(run):
    if run.timed_out:
        status = f"not finished within {RUN_TIMEOUT + WALL_MARGIN} s (killed)"
    else:
        status = f"status {run.returncode}"
    makespan = run.whole.get("makespan") if isinstance(run.whole, dict) else None
    return f"{status}, makespan {makespan if makespan is not None else '?'} s, wall {run.wall:.1f} s"


def joined(run):
    """The machines the server said joined the run."""
    return sorted(set(re.findall(r"machine (m\d+) joined the run", run.stderr)))


def compare(runs, check, program, ranks, count, expect=None, arguments=(), env=None):
    """One comparison: `program` on `ranks` ranks across `count` machines against one
    machine; `expect` a line its stdout must hold."""
    one = runs.reference(program, ranks, arguments, env)
    many = runs.run(program, ranks, count, arguments, env)
    what = f"{Path(program).name} on {ranks} ranks"
    problems = []
    for label, run in (("one machine", one), (f"{count} machines", many)):
        if run.timed_out or run.returncode != 0:
            problems.append(f"{label}: {describe(run)}\n      stdout: {tail(run.stdout, 4)}\n      stderr: "
                            f"{tail(run.stderr)}")
        elif run.summary is None:
            problems.append(f"{label}: no run summary\n      stderr: {tail(run.stderr)}")
        elif run.whole.get("status") != "ok":
            problems.append(f"{label}: summary status {run.whole.get('status')!r}: {run.whole.get('message')}")
        elif expect and expect not in run.stdout:
            problems.append(f"{label}: no line {expect!r} in its output: {tail(run.stdout, 4)}")
    others = [m.name for m in runs.machines[1:count]]
    if not problems and joined(many) != others:
        problems.append(f"{count} machines: the server saw {joined(many) or 'no machine'} join, not {others}\n"
                        f"      stderr: {tail(many.stderr)}")
    if not problems:
        changed = differences(one.summary, many.summary)
        if changed:
            shown = "\n      ".join(changed[:10])
            shown += f"\n      and {len(changed) - 10} more" if len(changed) > 10 else ""
            problems.append(f"the summaries differ:\n      {shown}\n      host decisions: one machine "
                            f"{host_decisions(one.whole)} / {count} machines {host_decisions(many.whole)}")
    found = (f"{what}, one machine ({describe(one)}) vs {count} machines ({describe(many)}"
             f"{', ' + ' '.join(joined(many)) + ' joined' if joined(many) else ''})")
    check(not problems, found + (": same summary" if not problems else ""),
          f"{what} across {count} machines: " + "; ".join(problems))
    for problem in problems:
        print(f"    {problem}", flush=True)
    return not problems


def processes(machine):
    """{pid: (comm, command line)} of the processes in `machine`, its init and this listing's
    own nsenter'd Python left out."""
    listed = machine.run([sys.executable, "-c", PROCESSES], capture_output=True, text=True, timeout=60)
    found = {}
    for line in listed.stdout.splitlines():
        pid, comm, command = (line.split("\t") + ["", ""])[:3]
        if pid != "1":
            found[int(pid)] = (comm, command)
    return found


def stock_open_mpi(runs, check, mpi):
    print("1. stock Open MPI collectives across machines", flush=True)
    compare(runs, check, mpi / "mpi_coll", 4, 2, expect="mpi_coll: ok")
    compare(runs, check, mpi / "mpi_coll", 4, 4, expect="mpi_coll: ok")
    compare(runs, check, mpi / "mpi_allreduce", 2, 2, expect="mpi_allreduce: 20 rounds of 1024 doubles on 2 ranks: ok")
    # Through a wrapper that execs the program: each rank registers, then re-attaches.
    compare(runs, check, Path("/bin/sh"), 2, 2, expect="mpi_allreduce: 20 rounds of 1024 doubles on 2 ranks: ok",
            arguments=("-c", f"exec {mpi / 'mpi_allreduce'}"))


def raw_portals(runs, check, pingpong, allreduce):
    print("2. raw Portals bootstrapped through PMI-1 (pmi_over_pmix) across machines", flush=True)
    compare(runs, check, pingpong, 2, 2, expect="pmi_pingpong: 2 ranks, 4 round trips of 8 B and of 65536 B, "
            "every byte checked: ok")
    for ranks in (2, 4):
        compare(runs, check, allreduce, ranks, ranks, expect=f"pmi_allreduce: {ranks} ranks, 3 rounds of 512 64-bit "
                "integers, every sum checked: ok")


def openshmem(runs, check, prefix):
    print("3. Sandia OpenSHMEM across machines (PMI-1 answered by the simulation under mpirun)", flush=True)
    unit = prefix / "tests" / "unit"
    compare(runs, check, unit / "rma_coverage", 2, 2)
    compare(runs, check, unit / "shmem_team_reduce", 4, 2)
    compare(runs, check, unit / "shmem_team_reduce", 4, 4)
    # Exec'd by a wrapper: the new image is an OpenSHMEM program that waits on its memory.
    compare(runs, check, Path("/bin/sh"), 2, 2, arguments=("-c", f"exec {unit / 'shmem_test'}"))


def direct_time_calls(runs, check, program):
    print("4. direct time system calls across machines", flush=True)
    compare(runs, check, program, 2, 2, arguments=("--exact",))


def lost_machine(runs, check, mpi):
    print("5. a machine lost: m1's agent killed while the ranks run", flush=True)
    machines, m0, m1 = runs.machines, runs.machines[0], runs.machines[1]
    ranks, count = 4, 2
    on_m1 = [r for r in range(ranks) if r % count == 1]
    line, summary = runs.line("lost-machine", mpi / "mpi_allreduce", ranks, count, LOST_RUN_TIMEOUT, [LOST_ROUNDS])
    out, err = machines.shared / "lost-machine.out", machines.shared / "lost-machine.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        launcher = m0.popen(line, stdout=stdout, stderr=stderr, env=runs.env)
    started = time.monotonic()
    try:
        # The agent and the ranks of m1 up and m1 in the run, then a second or two of the run.
        agent, ranks_there, joined_m1 = None, [], False
        while time.monotonic() - started < 60 and launcher.poll() is None:
            inside = processes(m1)
            agent = next((pid for pid, (comm, _) in inside.items() if comm == "s4bxi-agent"), None)
            ranks_there = [pid for pid, (comm, _) in inside.items() if comm == "mpi_allreduce"]
            joined_m1 = "machine m1 joined the run" in err.read_text(errors="replace")
            if agent and len(ranks_there) == len(on_m1) and joined_m1:
                break
            time.sleep(0.2)
        if not agent or len(ranks_there) != len(on_m1) or not joined_m1:
            check(False, f"m1 never had its agent, its {len(on_m1)} ranks and its place in the run (agent {agent}, "
                  f"ranks {ranks_there}, joined {joined_m1}); launcher "
                  f"{'status ' + str(launcher.returncode) if launcher.poll() is not None else 'running'}: "
                  f"{tail(err.read_text(errors='replace'))}", "step 5: the run never had its ranks and agent on m1")
            return
        time.sleep(1.5)
        before = err.read_text(errors="replace")
        still = launcher.poll() is None and "error" not in before and "left the run" not in before
        if not still:
            print(f"  the run ended or failed before the kill:\n      {tail(before)}", flush=True)
        # Found by name inside m1 (whose PID namespace holds only this run's processes), killed by its id.
        killed = m1.run(["kill", "-KILL", str(agent)], capture_output=True, text=True, timeout=30)
        killed_at = time.monotonic()
        print(f"  m1's agent (pid {agent} in m1) killed {killed_at - started:.1f} s after the start, ranks "
              f"{on_m1} on m1 (pids {ranks_there} there), the run "
              f"{'still running' if still else 'already over or failed'}"
              f"{'' if killed.returncode == 0 else ': kill said ' + killed.stderr.strip()}", flush=True)
        try:
            status = launcher.wait(timeout=LOST_RUN_TIMEOUT + WALL_MARGIN)
        except subprocess.TimeoutExpired:
            status = None
        ended = time.monotonic()
    finally:
        if launcher.poll() is None:
            kill_tree(launcher)
            launcher.wait()
    text = err.read_text(errors="replace")
    after = ended - killed_at
    within = status is not None and ended - started < LOST_RUN_TIMEOUT
    check(still and status not in (None, 0, 124) and within,
          f"the launcher exited with status {status} {after:.1f} s after the kill ({ended - started:.1f} s after the "
          f"start; --timeout {LOST_RUN_TIMEOUT})",
          f"step 5: the launcher's status {status}, {after:.1f} s after the kill, {ended - started:.1f} s after the "
          f"start (expected non-zero, not 124, within --timeout {LOST_RUN_TIMEOUT} s)")
    report = [line for line in text.splitlines() if re.search(r"\bm1\b", line) and "joined the run" not in line
              and "listening for processes" not in line]
    words = " ".join(report)
    named = [r for r in on_m1 if re.search(rf"\b{r}\b", re.sub(r"\d+\.\d+\.\d+\.\d+(:\d+)?", "", words))]
    print("  the launcher's stderr:\n      " + tail(text, 25), flush=True)
    written = load(summary)
    print(f"  its run summary: " + (f"status {written.get('status')!r}, exit status {written.get('exit_status')}, "
                                    f"message {written.get('message')!r}" if isinstance(written, dict) else "none"),
          flush=True)
    check(report and named == on_m1, f"lines naming m1: {report or 'none'}; ranks of m1 named there: {named}",
          f"step 5: stderr names m1 in {report or 'no line'}, ranks named {named}, expected {on_m1}")
    # Nothing of the run left in any machine (the launcher has exited: 5 s at most for the rest to go).
    deadline = time.monotonic() + 5
    while True:
        left = {m.name: {pid: entry for pid, entry in processes(m).items()
                         if entry[0] in RUN_PROCESSES or entry[0] == "mpi_allreduce"} for m in machines}
        if not any(left.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    shown = {name: [f"{pid} {comm}" for pid, (comm, _) in found.items()] for name, found in left.items() if found}
    check(not shown, f"processes of the run left: {shown or 'none'} (looked for {sorted(RUN_PROCESSES)} and the ranks)",
          f"step 5: processes left after the run: {shown}")
    others = {m.name: sorted(comm for comm, _ in processes(m).values()) for m in machines}
    print(f"  every process in the machines now: {others}", flush=True)


def main(argv):
    if len(argv) < 3:
        print(__doc__.rsplit("\n\n", 1)[-1], file=sys.stderr)
        return 2
    if "--skip" in argv:
        print(f"SKIP: {argv[argv.index('--skip') + 1]}")
        return SKIP
    launcher, build = str(Path(argv[1]).resolve()), Path(argv[2]).resolve()
    reason = skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    mpi = build / "tests" / "mpi"
    here = build / "tests" / "multihost"
    pingpong, allreduce, pmi_library = here / "pmi_pingpong", here / "pmi_allreduce", here / "libpmi_over_pmix.so"
    direct = build / "tests" / "integration" / "time" / "direct_syscalls"
    if not shutil.which("mpirun"):
        print("SKIP: mpirun was not found (Debian's Open MPI: tools/setup installs it)")
        return SKIP
    if why := missing_components(launcher):
        print(f"SKIP: {why}: run tools/setup (tools/build-openmpi-portals4; docs/openmpi.md)")
        return SKIP
    missing = [p.name for p in (mpi / "mpi_coll", mpi / "mpi_allreduce", pingpong, allreduce, pmi_library, direct)
               if not p.exists()]
    if missing:
        print(f"SKIP: {', '.join(missing)} not built (mpicc and PMIx's development files, libpmix-dev, are needed)")
        return SKIP
    try:
        sos = sos_prefix(launcher, argv[argv.index("--sos") + 1] if "--sos" in argv else None)
        sos_missing = None
    except LookupError as why:
        sos, sos_missing = None, str(why)

    started = time.monotonic()
    check = Check()
    # A checkout or build under /tmp (a CI's clone) is seen inside the machines all the same.
    with Machines(count=MACHINES, visible=(HERE.parents[1], build)) as machines:
        print(f"machines {', '.join(f'{m.name} {m.address}' for m in machines)} (run {machines.run_id}); server and "
              f"mpirun in m0", flush=True)
        runs = Runs(launcher, machines)
        for step in (lambda: stock_open_mpi(runs, check, mpi), lambda: raw_portals(runs, check, pingpong, allreduce),
                     lambda: openshmem(runs, check, sos) if sos else
                     print(f"3. Sandia OpenSHMEM across machines\n  skipped: {sos_missing}", flush=True),
                     lambda: direct_time_calls(runs, check, direct), lambda: lost_machine(runs, check, mpi)):
            step_started = time.monotonic()
            step()
            print(f"  ({time.monotonic() - step_started:.1f} s)", flush=True)
    print(f"wall time {time.monotonic() - started:.1f} s")
    if check.errors:
        print("FAIL:\n" + "\n".join(check.errors), file=sys.stderr)
        return 1
    if sos_missing:
        print(f"SKIP (steps 1, 2, 4 and 5 passed): {sos_missing}")
        return SKIP
    print("ok: Open MPI, raw Portals, OpenSHMEM and direct time system calls across 2 and 4 machines as on one; "
          "a lost machine reported, nothing left behind")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
