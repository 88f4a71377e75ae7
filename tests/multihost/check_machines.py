#!/usr/bin/env python3
"""The namespace machines of testkit/machines.py, on 3 machines:
1. isolation: a file in m0's /tmp, /dev/shm or /run is not in m1's; m0's processes are
   not in m1's /proc; a server on m0's 127.0.0.1 is not reachable from m1's; the caller's
   network interfaces are not in any machine;
2. reachability: a server on m0's address answers m1 and m2, which find it by name;
3. Open MPI across them, mpirun started inside m0 with the harness's rsh agent: one
   process per machine, each in its machine's network namespace, then mpi_sum.c (built
   with mpicc) on 3 ranks over TCP prints the right sum (skipped without mpicc/mpirun);
4. cleanup: once the `with` block is left, no namespace, interface, state folder or
   process of the run is left;
5. a harness stopped by SIGTERM cleans up the same; one killed by SIGKILL leaves only
   namespaces without processes, which cleanup_stale() removes.
Exit status 0 on success, 1 on failure, 77 when machines cannot be built here.

usage: check_machines.py"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: testkit
from testkit.findings import Check  # noqa: E402
from testkit.machines import (NAMESPACES, NETNS_DIR, PREFIX, STATE_ROOT, Machines,  # noqa: E402
                              cleanup_stale, kill_tree, namespace_ids, processes_in, skip_reason)

SKIP = 77
COUNT = 3
TIMEOUT = 30  # s, for any one command
# Programs run inside machines, by this Python (the file system outside /tmp, /dev/shm and
# /run is the caller's).
SERVER = """import socket, sys
server = socket.create_server((sys.argv[1], 0))
print(server.getsockname()[1], flush=True)
while True:
    connection, _ = server.accept()
    connection.sendall(socket.gethostname().encode())
    connection.close()
"""
CLIENT = """import socket, sys
try:
    with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5) as connection:
        print("answered", connection.recv(100).decode(), socket.gethostbyname(sys.argv[1]))
except OSError as error:
    print("unreachable", error)
    sys.exit(1)
"""
COMMAND_LINES = """import os
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            print(open(f"/proc/{pid}/cmdline").read().replace("\\0", " "))
        except OSError:
            pass
"""
# A harness for step 5: prints its run id and its machines' inits, then waits.
HARNESS = """import json, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from testkit.machines import Machines
with Machines(2) as machines:
    sleeper = machines[1].popen(["sh", "-c", "echo; exec sleep 600"], stdout=subprocess.PIPE)
    sleeper.stdout.readline()
    print(json.dumps([machines.run_id, [m.pid for m in machines]]), flush=True)
    time.sleep(600)
"""


def python(machine, code, *arguments, **kwargs):
    return machine.run([sys.executable, "-c", code, *map(str, arguments)], capture_output=True, text=True,
                       timeout=TIMEOUT, **kwargs)


def start_server(machine, host):
    """A server on `host` in `machine` that answers its hostname; (process, port)."""
    server = machine.popen([sys.executable, "-c", SERVER, host], stdout=subprocess.PIPE, text=True)
    return server, int(server.stdout.readline())


def stop(process):
    kill_tree(process)
    process.wait()


def isolation(machines, check):
    print("1. isolation", flush=True)
    m0, m1 = machines[0], machines[1]
    name = f"s4bxi-isolation-{machines.run_id}"
    paths = [f"{folder}/{name}" for folder in ("/tmp", "/dev/shm", "/run")]
    m0.run(["sh", "-c", "for p; do echo m0 > $p; done", "sh", *paths], check=True, timeout=TIMEOUT)
    present = [p for p in paths if m0.run(["test", "-e", p], timeout=TIMEOUT).returncode == 0]
    seen = [p for p in paths if m1.run(["test", "-e", p], timeout=TIMEOUT).returncode == 0]
    outside = [p for p in paths if Path(p).exists()]
    check(present == paths and not seen and not outside,
          f"m0 wrote {present}; m1 sees {seen or 'none of them'}; the caller sees {outside or 'none of them'}",
          f"files: written in m0 {present}, seen in m1 {seen}, seen outside {outside}")

    marker = "31.4159"
    sleeper = m0.popen(["sleep", marker])
    try:
        in_m0 = [line for line in python(m0, COMMAND_LINES).stdout.splitlines() if marker in line]
        in_m1 = [line for line in python(m1, COMMAND_LINES).stdout.splitlines() if marker in line]
        pids = python(m1, "import os; print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))").stdout.strip()
    finally:
        stop(sleeper)
    check(in_m0 and not in_m1, f"sleep {marker} in m0's /proc: {in_m0}; in m1's: {in_m1 or 'absent'}; "
          f"m1's PIDs {pids}", f"processes: m0's sleep seen in m1's /proc ({in_m1}) or not in m0's ({in_m0})")

    server, port = start_server(m0, "127.0.0.1")
    try:
        local = python(m0, CLIENT, "127.0.0.1", port)
        remote = python(m1, CLIENT, "127.0.0.1", port)
    finally:
        stop(server)
    check(local.returncode == 0 and remote.returncode != 0,
          f"127.0.0.1:{port} from m0: {local.stdout.strip()}; from m1: {remote.stdout.strip()}",
          f"loopback: m0 {local.stdout.strip()}{local.stderr}, m1 {remote.stdout.strip()}{remote.stderr}")

    def links(prefix=()):
        listed = subprocess.run([*prefix, "ip", "-o", "link"], capture_output=True, text=True, check=True,
                                timeout=TIMEOUT).stdout
        return {line.split(":")[1].strip().split("@")[0]: line.split("link/")[1].split()[1] if "link/" in line else ""
                for line in listed.splitlines()}

    caller = links()
    caller_addresses = {mac for name, mac in caller.items() if name != "lo"}
    own_net = os.readlink("/proc/self/ns/net")
    for machine in machines:
        inside = links(machine.enter_command())
        sysfs = sorted(machine.run(["ls", "/sys/class/net"], capture_output=True, text=True,
                                   timeout=TIMEOUT).stdout.split())
        net = machine.run(["readlink", "/proc/self/ns/net"], capture_output=True, text=True,
                          timeout=TIMEOUT).stdout.strip()
        shared = caller_addresses & {mac for name, mac in inside.items() if name != "lo"}
        check(sorted(inside) == ["eth0", "lo"] == sysfs and not shared and net != own_net,
              f"{machine.name}: interfaces {sorted(inside)}, /sys/class/net {sysfs}, {net} (the caller's {own_net})",
              f"{machine.name}: interfaces {inside}, /sys/class/net {sysfs}, the caller's MACs {shared}, {net}")


def reachability(machines, check):
    print("2. reachability by name", flush=True)
    m0 = machines[0]
    server, port = start_server(m0, m0.address)
    try:
        for machine in machines[1:]:
            reached = python(machine, CLIENT, m0.name, port)
            check(reached.stdout.split() == ["answered", m0.name, m0.address],
                  f"{machine.name} -> {m0.name}:{port}: {reached.stdout.strip()}",
                  f"{machine.name} could not reach {m0.name}: {reached.stdout.strip()} {reached.stderr.strip()}")
    finally:
        stop(server)


def open_mpi(machines, check):
    print("3. Open MPI across the machines", flush=True)
    missing = [tool for tool in ("mpicc", "mpirun") if not shutil.which(tool)]
    if missing:
        print(f"  skipped: {' and '.join(missing)} missing")
        return
    env = {**os.environ, "OMPI_MCA_plm_rsh_agent": str(machines.rsh_agent), "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    mpirun = ["mpirun", "--hostfile", str(machines.hostfile()), "-np", str(COUNT), "--map-by", "node"]
    started = time.monotonic()
    ran = machines[0].run([*mpirun, "sh", "-c", 'echo "$(hostname) $(readlink /proc/self/ns/net)"'],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT)
    found = sorted(tuple(line.split()) for line in ran.stdout.splitlines())
    expected = sorted((m.name, m.namespaces()["net"]) for m in machines)
    check(ran.returncode == 0 and found == expected,
          f"mpirun from m0 ({time.monotonic() - started:.1f} s): {found}",
          f"mpirun from m0: status {ran.returncode}, printed {found}, expected {expected}: {ran.stderr[-2000:]}")

    work = Path(tempfile.mkdtemp(dir=machines.shared))  # the caller's /tmp is not in the machines
    program = work / "mpi_sum"
    built = subprocess.run(["mpicc", "-O1", "-o", str(program), str(HERE / "mpi_sum.c")], capture_output=True,
                           text=True, timeout=120)
    if built.returncode != 0:
        check(False, "mpicc failed", f"mpicc: {built.stderr[-2000:]}")
        return
    started = time.monotonic()
    ran = machines[0].run([*mpirun, "--mca", "pml", "ob1", "--mca", "btl", "tcp,self", str(program)],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT)
    names = " ".join(m.name for m in machines)
    wanted = f"sum {sum(range(COUNT))} of {COUNT} ranks on {names}"
    check(ran.returncode == 0 and ran.stdout.strip() == wanted,
          f"mpi_sum over TCP ({time.monotonic() - started:.1f} s): {ran.stdout.strip()}",
          f"mpi_sum: status {ran.returncode}, printed {ran.stdout.strip()!r}, expected {wanted!r}: "
          f"{ran.stderr[-2000:]}")


class Pinned:
    """The namespaces of run `run_id`, whose machines' inits are `pids`, held open: a freed
    namespace's number is soon another's (a concurrent run's, an `ip -n`'s), and a process
    found in it would be taken for a leftover."""

    def __init__(self, run_id, pids):
        self.fds = [os.open(NETNS_DIR / f"{PREFIX}{run_id}-sw", os.O_RDONLY)]
        self.ids = [f"net:[{os.fstat(self.fds[0]).st_ino}]"]
        for pid in pids:
            for kind in NAMESPACES:
                self.fds.append(os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY))
                self.ids.append(os.readlink(f"/proc/{pid}/ns/{kind}"))

    def __enter__(self):
        return self.ids

    def __exit__(self, *_):
        for fd in self.fds:
            os.close(fd)


def leftovers(run_id, namespaces):
    """What is left of run `run_id` whose machines had `namespaces` (held by Pinned)."""
    left = [str(p) for p in NETNS_DIR.glob(f"{PREFIX}{run_id}-*")]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, timeout=TIMEOUT).stdout
    left += [line.split(":")[1].strip() for line in links.splitlines() if run_id in line]
    state = STATE_ROOT / f"{PREFIX}{run_id}"
    left += [str(state)] if state.exists() else []
    for pid in processes_in(namespaces):
        shared = [ns for ns in namespace_ids(pid).values() if ns in namespaces]
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()[:80].replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            command = "gone since"
        left.append(f"process {pid} ({command}, in {shared})")
    return left


def crashed_harnesses(check):
    print("5. a harness stopped by SIGTERM, one killed by SIGKILL", flush=True)
    for number in (signal.SIGTERM, signal.SIGKILL):
        # Stopped with this test if it is stopped first (its machines would outlive it).
        harness = subprocess.Popen(["setpriv", "--pdeathsig", "TERM", "--", sys.executable, "-c", HARNESS,
                                    str(HERE.parent)], stdout=subprocess.PIPE, text=True)
        line = harness.stdout.readline()
        if not line:
            harness.wait()
            check(False, "the harness did not start", f"harness for {number.name}: exit status {harness.returncode}")
            continue
        run_id, pids = json.loads(line)
        with Pinned(run_id, pids) as namespaces:
            harness.send_signal(number)
            status = harness.wait(timeout=TIMEOUT)
            if number == signal.SIGTERM:
                left = leftovers(run_id, namespaces)
                check(not left, f"SIGTERM: exit status {status}, left {left or 'nothing'}",
                      f"after SIGTERM, left {left}")
                continue
            deadline = time.monotonic() + 5
            while processes_in(namespaces) and time.monotonic() < deadline:
                time.sleep(0.05)
            survivors = processes_in(namespaces)
            stale = sorted(p.name for p in NETNS_DIR.glob(f"{PREFIX}{run_id}-*"))
            removed = cleanup_stale()
            left = leftovers(run_id, namespaces)
        # A concurrent run's cleanup_stale() may have removed some of them first.
        check(not survivors and not left,
              f"SIGKILL: processes left {survivors or 'none'}; stale {stale or 'none (a concurrent run removed it)'}; "
              f"cleanup_stale() removed {removed}; left {left or 'nothing'}",
              f"after SIGKILL: processes {survivors}, stale {stale}, cleanup_stale() removed {removed}, "
              f"then left {left}")


def main():
    reason = skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    started = time.monotonic()
    check = Check()
    removed = cleanup_stale()
    print(f"leftovers of earlier runs removed: {removed or 'none'}")
    with Machines(count=COUNT) as machines:
        run_id = machines.run_id
        pinned = Pinned(run_id, [m.pid for m in machines])
        print(f"run {run_id}: " + ", ".join(f"{m.name} {m.address} (init {m.pid})" for m in machines)
              + f"; switch {machines.switch_netns}", flush=True)
        isolation(machines, check)
        reachability(machines, check)
        open_mpi(machines, check)
    print("4. cleanup", flush=True)
    with pinned as namespaces:
        left = leftovers(run_id, namespaces)
    check(not left, f"left {left or 'nothing'}", f"left after the run: {left}")
    crashed_harnesses(check)
    print(f"wall time {time.monotonic() - started:.1f} s")
    if check.errors:
        print("FAIL: " + "; ".join(check.errors), file=sys.stderr)
        return 1
    print("ok: machines isolated, reachable by name, Open MPI across them, nothing left behind")
    return 0


if __name__ == "__main__":
    sys.exit(main())
