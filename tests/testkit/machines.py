"""Several "machines" on one host, made of Linux namespaces, for tests of runs whose ranks
are on several hosts.

    with Machines(count=3) as machines:
        m = machines[0]
        m.name, m.address               # "m0", "10.X.Y.1"
        m.run(["hostname"], capture_output=True, text=True)   # subprocess.run, inside m0
        m.popen([...])                  # subprocess.Popen, inside m0
        kill_tree(process)              # kills such a command and all it started
        machines.enter_command(1)       # the argv prefix that enters m1, for other tools
        machines.rsh_agent              # Open MPI's plm_rsh_agent: `AGENT HOST COMMAND...`
        machines.hostfile(slots=1)      # an Open MPI hostfile naming the machines
        machines.shared                 # a folder at the same path in every machine

A machine has its own network, PID, mount, UTS (hostname m<i>) and IPC namespaces, and
private tmpfs on /tmp, /dev/shm and /run, so that one machine sees neither another's
files there, nor its processes, nor its sockets, nor the caller's network interfaces.
The rest of the file system is shared, like a cluster's network file system: programs
built by a test must be under `machines.shared` (the caller's /tmp is hidden inside), or
their folder named in `Machines(count, visible=[...])`, which every machine then sees at
the same path (a checkout or a build under /tmp).
Each machine has `lo` and `eth0` (10.X.Y.<i+1>/24, X.Y derived from the run id) and a
private /etc/hosts naming every machine. A machine's namespaces are held by an init
process (PID 1 of its PID namespace, which reaps orphans as an init does); killing it
kills everything inside.

The switch is a bridge in a network namespace of its own (s4bxi-RUN-sw), joined to each
machine by a veth pair created there with its peer in the machine: nothing is added to
the caller's network namespace, and concurrent runs cannot collide on interface names.

The namespaces are named s4bxi-RUN-m<i> and s4bxi-RUN-sw (RUN: 6 hex digits, random per
instance), each created together with a holder process. A namespace of that prefix that
no process lives in, and whose run's owner (the process that built it, recorded in the
state folder /var/tmp/s4bxi-RUN) is gone, is a leftover of a run that died:
`cleanup_stale()` removes those, and the state folders whose owner is gone. The holders
die with the harness (parent-death signal), even when it is killed with SIGKILL; SIGTERM
and SIGHUP raise SystemExit in the main thread (as SIGINT raises KeyboardInterrupt) so
that `with` cleans up. Build the machines from the main thread: the parent-death signal
follows the thread that started the holders.

Entering a machine from inside another is impossible with nsenter: setns() enters only a
PID namespace below the caller's, and machines are siblings. So the rsh agent, like ssh,
asks a server that lives outside every machine: the harness listens on a Unix socket in
its state folder (visible in every machine, like `shared`), receives the host, the
command line and the agent's standard input, output and error (file descriptors passed
over the socket), runs `$SHELL -c COMMAND` inside that machine with them, and sends back
the exit status. The command gets the agent's PATH, LD_LIBRARY_PATH, HOME, USER,
LOGNAME, SHELL, TERM, LANG, LC_* and OMPI_ALLOW_RUN_AS_ROOT* (Open MPI passes the rest
on orted's command line) and starts in HOME, as over ssh. If the agent dies (mpirun kills
it), the command and all it started are killed.

Root only. `skip_reason()` says why machines cannot be built here, or None.
`python3 machines.py cleanup` runs cleanup_stale(); `machines.py agent SOCKET ...` is the
agent itself (the generated script runs it)."""
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

PREFIX = "s4bxi-"
NETNS_DIR = Path("/run/netns")
# Not /tmp, /run nor /dev/shm, which are private in each machine: the state folder (the
# agent, its socket, the hostfiles, `shared`) must be at the same path in all of them.
STATE_ROOT = Path("/var/tmp")
TOOLS = ("ip", "unshare", "nsenter", "mount", "setpriv", "sleep")
NAMESPACES = ("net", "pid", "mnt", "uts", "ipc")
ENTER_FLAGS = ["--net", "--pid", "--mount", "--uts", "--ipc"]
# What a machine's init does in its new namespaces before holding them. $1: hostname,
# $2: its /etc/hosts, $3: Python. sysfs is mounted again so that /sys/class/net is the
# machine's. Then it reaps the processes orphaned inside, as an init does (a command killed
# with its parent, an orted whose mpirun died), which would otherwise stay zombies.
INIT_SCRIPT = """set -e
hostname "$1"
umount -l /sys 2>/dev/null || true
mount -t sysfs sysfs /sys
mount --bind "$2" /etc/hosts
python="$3"; reaper="$4"; stage="$5"; shift 5
i=0; for path; do mkdir -p "$stage/$i"; mount --bind "$path" "$stage/$i"; i=$((i + 1)); done
mount -t tmpfs -o mode=1777 s4bxi /tmp
mount -t tmpfs -o mode=1777 s4bxi /dev/shm
mount -t tmpfs -o mode=755 s4bxi /run
i=0; for path; do mkdir -p "$path"; mount --move "$stage/$i" "$path"; i=$((i + 1)); done
ip link set lo up
echo ready
exec "$python" -I -c "$reaper" </dev/null >/dev/null 2>&1
"""
# Where a machine's private /tmp, /dev/shm and /run would hide a folder of the caller's.
HIDDEN_INSIDE = ("/tmp", "/dev/shm", "/run")
REAPER = """import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    signal.sigwaitinfo({signal.SIGCHLD})
"""
HOLD_SCRIPT = "echo ready; exec sleep infinity </dev/null >/dev/null 2>&1"
FORWARDED = ("PATH", "LD_LIBRARY_PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG")
FORWARDED_PREFIXES = ("LC_", "OMPI_ALLOW_RUN_AS_ROOT")
# ssh's options that take a value: the agent skips them as ssh would read them.
SSH_VALUE_FLAGS = set("BbcDEeFIiJLlmOoPpQRSWw")
AGENT_FAILURE = 255  # ssh's status when it could not run the command


def skip_reason():
    """Why namespace machines cannot be built here, or None."""
    if os.geteuid() != 0:
        return "namespace machines need root"
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        return f"namespace machines need {', '.join(missing)}"
    # Unnamed namespaces: a named probe would be a leftover for a concurrent cleanup_stale().
    probe = subprocess.run(["unshare", "--net", "--pid", "--mount", "--uts", "--ipc", "--fork", "--mount-proc",
                            "sh", "-c", "ip link add p0 type veth peer name p1 && ip link add p2 type bridge"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"network, PID, mount, UTS or IPC namespaces, veths or bridges refused: {probe.stderr.strip()}"
    if not os.access(NETNS_DIR if NETNS_DIR.exists() else NETNS_DIR.parent, os.W_OK):
        return f"{NETNS_DIR} is not writable"
    return None


def namespace_ids(pid):
    """The namespaces of process `pid` ({"net": "net:[4026532...]", ...}); {} if it is gone."""
    try:
        return {kind: os.readlink(f"/proc/{pid}/ns/{kind}") for kind in NAMESPACES}
    except OSError:
        return {}


def processes_in(ids):
    """The processes of the host that live in any of the namespaces `ids` (values of
    namespace_ids, or "net:[N]" strings). The kernel gives a freed namespace's number to
    the next one: `ids` must be of namespaces still held (by a process, a bind mount or an
    open file), or the processes found may be in another's."""
    wanted = set(ids)
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        for kind in NAMESPACES:
            try:
                if os.readlink(f"/proc/{entry.name}/ns/{kind}") in wanted:
                    found.append(int(entry.name))
                    break
            except OSError:
                break
    return found


def _netns_id(path):
    """The "net:[N]" id of the namespace bound at `path`, or None if nothing is bound there
    (a file being created, or one left empty)."""
    try:
        info, folder = os.stat(path), os.stat(path.parent)
    except OSError:
        return None
    return f"net:[{info.st_ino}]" if info.st_dev != folder.st_dev else None


def _delete_netns(name):
    """Unbinds and removes the namespace file `name`; the kernel frees the namespace (and
    its interfaces, veth peers included) once no process holds it."""
    if subprocess.run(["ip", "netns", "del", name], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(NETNS_DIR / name)], capture_output=True)
        (NETNS_DIR / name).unlink(missing_ok=True)


def _alive(owner):
    """Whether the process recorded as "PID START" (start time in clock ticks) runs."""
    try:
        pid, start = owner.split()
        return _start_time(int(pid)) == start
    except (OSError, ValueError):
        return False


def _start_time(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[19]


def cleanup_stale():
    """Removes the leftovers of runs that died: network namespaces named s4bxi-* that no
    process lives in (with their bridge and veths), unless their run's owner still runs
    (it is building or removing them), and state folders whose owner is gone. Returns
    what it removed."""
    removed = []
    if NETNS_DIR.is_dir():
        bound = {}
        for path in NETNS_DIR.iterdir():
            if not path.name.startswith(PREFIX) or _alive(_read(STATE_ROOT / path.name.rsplit("-", 1)[0] / "owner")):
                continue
            ns = _netns_id(path)
            if ns is None:  # never bound: its run died while creating it
                path.unlink(missing_ok=True)
                removed.append(path.name)
            else:
                bound[ns] = path.name
        held = {os.readlink(f"/proc/{pid}/ns/net") for pid in processes_in(bound)}
        for ns, name in bound.items():
            if ns not in held:
                _delete_netns(name)
                removed.append(name)
    for state in STATE_ROOT.glob(PREFIX + "*"):
        if state.is_dir() and (state / "owner").exists() and not _alive(_read(state / "owner")):
            shutil.rmtree(state, ignore_errors=True)
            removed.append(str(state))
    return removed


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def _child_of(pid):
    """The one child of process `pid` (the init that `unshare --fork` started)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN
        children = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()
                    and _read(Path(f"/proc/{entry.name}/stat")).rsplit(")", 1)[-1].split()[1:2] == [str(pid)]]
    if len(children) != 1:
        raise RuntimeError(f"unshare (pid {pid}) has children {children}, expected its init alone")
    return int(children[0])


def _descendants(pid):
    """The processes below `pid`, parents before their children."""
    children = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _read(Path(f"/proc/{entry.name}/stat")).rsplit(")", 1)[-1].split()
            if len(fields) > 1:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def kill_tree(process):
    """Kills a command run inside a machine (`process`: the Popen or PID of its nsenter) and
    every process it started. Killing its process group is not enough: mpirun puts its rsh
    agents and its ranks in groups of their own. Each is stopped first, so that none forks
    meanwhile or, its parent killed, is orphaned out of reach. nsenter itself is let go to
    reap its command, whose parent it is: killed, it would leave it a zombie for the
    caller's init, shown in the machine's /proc."""
    if not isinstance(process, int) and process.poll() is not None:
        return  # reaped: its PID may be another's now
    root = process if isinstance(process, int) else process.pid
    stopped = []
    while new := [pid for pid in [root] + _descendants(root) if pid not in stopped]:
        for pid in new:
            _signal(pid, signal.SIGSTOP)
            stopped.append(pid)
    for pid in stopped[1:]:
        _signal(pid, signal.SIGKILL)
    if not stopped[1:]:
        _signal(root, signal.SIGKILL)
        return
    # nsenter stops itself when it sees its command stopped, which it may see after the
    # command's death: it is continued until it has reaped it.
    deadline = time.monotonic() + 5
    while (state := _state(root)) not in ("", "Z"):
        if time.monotonic() > deadline:
            _signal(root, signal.SIGKILL)
            break
        if state == "T":
            _signal(root, signal.SIGCONT)
        time.sleep(0.01)


def _state(pid):
    """The state of process `pid` (R, S, T, Z...), "" if it is gone."""
    fields = _read(Path(f"/proc/{pid}/stat")).rsplit(")", 1)[-1].split()
    return fields[0] if fields else ""


def _signal(pid, number):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


class Machine:
    """One machine: `index`, `name` (m<i>, its hostname), `address`, `netns` (its network
    namespace's name), `pid` (its init's, as the caller sees it)."""

    def __init__(self, index, address, netns):
        self.index, self.name, self.address, self.netns = index, f"m{index}", address, netns
        self.pid = None
        self._pidfd = None
        self._holder = None
        # nsenter stays in the machine's namespaces, outside its PID namespace, until its
        # command ends: close() waits for every one. The relay's threads start commands too.
        self._commands = []
        self._lock = threading.Lock()

    def enter_command(self, cwd=None):
        """The argv prefix that runs a command inside the machine (in folder `cwd`, else
        its /)."""
        return ["nsenter", f"--target={self.pid}", *ENTER_FLAGS] + ([f"--wd={cwd}"] if cwd else []) + ["--"]

    def popen(self, argv, cwd=None, start_new_session=True, **kwargs):
        """subprocess.Popen of `argv` inside the machine, in a session of its own; kill_tree
        stops it with what it started."""
        process = subprocess.Popen(self.enter_command(cwd) + [str(a) for a in argv],
                                   start_new_session=start_new_session, **kwargs)
        with self._lock:
            self._commands = [command for command in self._commands if command.poll() is None] + [process]
        return process

    def run(self, argv, *, input=None, capture_output=False, timeout=None, check=False, cwd=None, **kwargs):
        """subprocess.run of `argv` inside the machine; on a timeout or an interrupt, the
        command and all it started are killed (kill_tree), not only nsenter."""
        if capture_output:
            kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
        if input is not None:
            kwargs["stdin"] = subprocess.PIPE
        with self.popen(argv, cwd=cwd, **kwargs) as process:
            try:
                stdout, stderr = process.communicate(input, timeout=timeout)
            except BaseException:
                kill_tree(process)
                process.wait()
                raise
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if check:
            result.check_returncode()
        return result

    def namespaces(self):
        """The machine's namespaces (namespace_ids of its init)."""
        return namespace_ids(self.pid)


class Machines:
    """`count` machines (module docstring); a context manager that builds them and removes
    them, processes inside included."""

    def __init__(self, count=2, visible=()):
        """`visible`: folders of the caller's under /tmp, /dev/shm or /run that every machine
        must see at the same path all the same (a build or a checkout there), as a
        cluster's shared file system shows them; others are seen anyway."""
        if not 1 <= count <= 250:
            raise ValueError(f"count {count}: from 1 to 250 machines")
        self.count = count
        self.visible = sorted({str(Path(p).resolve()) for p in visible
                               if any(str(Path(p).resolve()).startswith(h + "/") for h in HIDDEN_INSIDE)})
        self.run_id = secrets.token_hex(3)
        octets = bytes.fromhex(self.run_id)
        prefix = f"10.{octets[0]}.{octets[1]}"
        self.network = f"{prefix}.0/24"
        self.state = STATE_ROOT / (PREFIX + self.run_id)
        self.shared = self.state / "shared"
        self.rsh_agent = self.state / "rsh-agent"
        self.switch_netns = f"{PREFIX}{self.run_id}-sw"
        self.machines = [Machine(i, f"{prefix}.{i + 1}", f"{PREFIX}{self.run_id}-m{i}") for i in range(count)]
        self._switch = None
        self._relay = None
        self._signals = {}
        self._closed = False

    def __getitem__(self, index):
        return self.machines[index]

    def __len__(self):
        return len(self.machines)

    def __iter__(self):
        return iter(self.machines)

    def enter_command(self, index, cwd=None):
        """The argv prefix that runs a command inside machine `index` (Machine.enter_command)."""
        return self.machines[index].enter_command(cwd)

    def hostfile(self, slots=1):
        """An Open MPI hostfile naming every machine with `slots` slots."""
        path = self.state / f"hostfile-{slots}"
        path.write_text("".join(f"{m.name} slots={slots}\n" for m in self.machines))
        return path

    def netns_names(self):
        """The run's network namespaces: the switch's, then the machines'."""
        return [self.switch_netns] + [m.netns for m in self.machines]

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGTERM, signal.SIGHUP):
                self._signals[number] = signal.signal(number, _exit_on_signal)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_):
        self.close()

    def _build(self):
        self.state.mkdir(mode=0o755)
        (self.state / "owner").write_text(f"{os.getpid()} {_start_time(os.getpid())}")
        self.shared.mkdir()
        NETNS_DIR.mkdir(parents=True, exist_ok=True)
        self._switch = self._hold(self.switch_netns, ["sh", "-c", HOLD_SCRIPT])
        hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n" + "".join(
            f"{m.address} {m.name}\n" for m in self.machines)
        for m in self.machines:
            (self.state / f"hosts-{m.name}").write_text(hosts)
            stage = self.state / f"visible-{m.name}"
            stage.mkdir()
            m._holder = self._hold(m.netns, ["--pid", "--mount", "--uts", "--ipc", "--kill-child=KILL", "--mount-proc",
                                             "--propagation", "private", "sh", "-c", INIT_SCRIPT, "init", m.name,
                                             str(self.state / f"hosts-{m.name}"), sys.executable, REAPER, str(stage),
                                             *self.visible])
            m.pid = _child_of(m._holder.pid)
            m._pidfd = os.pidfd_open(m.pid)
        bridge = PREFIX + self.run_id
        self._ip(self.switch_netns, "link", "add", bridge, "type", "bridge")
        self._ip(self.switch_netns, "link", "set", bridge, "up")
        for m in self.machines:
            self._ip(self.switch_netns, "link", "add", m.name, "type", "veth", "peer", "name", "eth0", "netns", m.netns)
            self._ip(self.switch_netns, "link", "set", m.name, "master", bridge, "up")
            self._ip(m.netns, "addr", "add", f"{m.address}/24", "dev", "eth0")
            self._ip(m.netns, "link", "set", "eth0", "up")
        # The agent's copy of this module: the caller's may be under a /tmp that machines do not see.
        shutil.copy(__file__, self.state / "machines.py")
        self.rsh_agent.write_text(f"#!/bin/sh\nexec '{sys.executable}' -I '{self.state / 'machines.py'}' agent "
                                  f"'{self.state / 'relay.sock'}' \"$@\"\n")
        self.rsh_agent.chmod(0o755)
        self._relay = _Relay(self.state / "relay.sock", {m.name: m for m in self.machines})

    def _hold(self, netns, unshare_arguments):
        """Starts a process in a new network namespace bound to NETNS_DIR/netns, dying with
        this thread, and returns once the namespace exists and the process said "ready"."""
        (NETNS_DIR / netns).touch()
        holder = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", "unshare", f"--net={NETNS_DIR / netns}",
                                   *unshare_arguments], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = holder.stdout.readline()
        holder.stdout.close()
        if line != "ready\n":
            holder.kill()
            error = holder.stderr.read()
            holder.wait()
            raise RuntimeError(f"namespace {netns} could not be set up: {error.strip()}")
        holder.stderr.close()
        return holder

    @staticmethod
    def _ip(netns, *arguments):
        done = subprocess.run(["ip", "-n", netns, *arguments], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ip -n {netns} {' '.join(arguments)}: {done.stderr.strip()}")

    def close(self):
        """Kills every process inside the machines and removes their namespaces, the
        switch and the state folder. Signals wait until it is done."""
        if self._closed:
            return
        self._closed = True
        # A signal now is acted on once everything is removed (raising at once would leave it half done).
        held = []
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                previous[number] = signal.signal(number, lambda number, _frame: held.append(number))
        try:
            if self._relay:
                self._relay.stop()
            for m in self.machines:
                if m._pidfd is not None:
                    signal.pidfd_send_signal(m._pidfd, signal.SIGKILL)
                    os.close(m._pidfd)
                elif m._holder:
                    m._holder.kill()
            if self._switch:
                self._switch.kill()
            # A holder exits once its init is reaped, which the kernel does after every
            # process of the PID namespace; then nsenter's commands are gone too.
            commands = []
            for m in self.machines:
                with m._lock:
                    commands += m._commands
            for process in [self._switch] + [m._holder for m in self.machines] + commands:
                if process:
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        pass  # its namespace stays held; cleanup_stale() removes it once free
            for name in self.netns_names():
                if (NETNS_DIR / name).exists():
                    _delete_netns(name)
            shutil.rmtree(self.state, ignore_errors=True)
        finally:
            for number, handler in {**previous, **self._signals}.items():  # those from before the machines
                signal.signal(number, handler)
            for number in held:
                signal.raise_signal(number)


def _exit_on_signal(number, _frame):
    raise SystemExit(128 + number)


class _Relay:
    """The server of the rsh agent (module docstring): one thread accepting, one per
    command."""

    def __init__(self, path, machines):
        self.machines = machines
        self.sessions = set()
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(64)
        self.thread = threading.Thread(target=self._accept, name="machines-relay", daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # stop() shut the socket down
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection):
        with connection:
            fds = []
            try:
                data, fds, _, _ = socket.recv_fds(connection, 65536, 3)
                while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
                    more = connection.recv(65536)
                    if not more:
                        return
                    data += more
                request = json.loads(data[4:])
                machine = self.machines.get(request["host"])
                if machine is None:
                    connection.sendall(f"error unknown machine {request['host']!r}".encode())
                    return
                stdio = dict(zip(request["fds"], fds))
                env = request["env"]
                home = env.get("HOME", "/")
                shell = pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
                process = machine.popen([shell, "-c", request["command"]], cwd=home if os.path.isdir(home) else "/",
                                        stdin=stdio.get(0, subprocess.DEVNULL), stdout=stdio.get(1, subprocess.DEVNULL),
                                        stderr=stdio.get(2, subprocess.DEVNULL), env=env)
            except (OSError, ValueError, KeyError) as error:
                try:
                    connection.sendall(f"error {error}".encode())
                except OSError:
                    pass
                return
            finally:
                for fd in fds:  # the command has them; kept here, a reader would never see their end
                    os.close(fd)
            with self.lock:
                self.sessions.add(process)
            threading.Thread(target=self._watch, args=(connection, process), daemon=True).start()
            status = process.wait()
            with self.lock:
                self.sessions.discard(process)
            try:
                connection.sendall(f"status {status if status >= 0 else 128 - status}".encode())
                connection.shutdown(socket.SHUT_RDWR)  # wakes _watch, which close() would not
            except OSError:
                pass

    @staticmethod
    def _watch(connection, process):
        """Kills the command when its agent goes away before it ends."""
        try:
            connection.recv(1)
        except OSError:
            pass
        if process.poll() is None:
            kill_tree(process)

    def stop(self):
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()
        with self.lock:
            for process in self.sessions:
                kill_tree(process)


def agent(argv):
    """The rsh agent: `agent SOCKET [ssh options] HOST COMMAND...` runs COMMAND (its words
    joined, as ssh does) in machine HOST through the harness listening on SOCKET; exits
    with its status."""
    path, arguments = argv[0], argv[1:]
    i = 0
    while i < len(arguments) and arguments[i].startswith("-"):
        i += 2 if len(arguments[i]) == 2 and arguments[i][1] in SSH_VALUE_FLAGS else 1
    if len(arguments) < i + 2:
        print("usage: rsh-agent [ssh options] HOST COMMAND...", file=sys.stderr)
        return AGENT_FAILURE
    host, command = arguments[i], " ".join(arguments[i + 1:])
    env = {key: value for key, value in os.environ.items() if key in FORWARDED or key.startswith(FORWARDED_PREFIXES)}
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    payload = json.dumps({"host": host, "command": command, "env": env, "fds": fds}).encode()
    message = struct.pack("!I", len(payload)) + payload
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        try:
            connection.connect(path)
            sent = socket.send_fds(connection, [message], fds)
            connection.sendall(message[sent:])
            reply = b""
            while chunk := connection.recv(4096):
                reply += chunk
        except OSError as error:
            print(f"rsh-agent: the machines' harness at {path} is unreachable: {error}", file=sys.stderr)
            return AGENT_FAILURE
    kind, _, value = reply.decode().partition(" ")
    if kind == "status":
        return int(value)
    print(f"rsh-agent: {host}: {value or 'the harness closed the connection'}", file=sys.stderr)
    return AGENT_FAILURE


def main(argv):
    if argv[1:2] == ["agent"] and len(argv) > 2:
        return agent(argv[2:])
    if argv[1:] == ["cleanup"]:
        for name in cleanup_stale():
            print(f"removed {name}")
        return 0
    print(__doc__.rsplit("\n\n", 1)[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
