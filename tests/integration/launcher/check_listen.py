#!/usr/bin/env python3
"""--listen ADDR:PORT (docs/multi-host.md): the server listens on that address only; a
connection that does not prove itself with the run's secret is refused and logged, and
nothing else happens to the run; one that does is accepted as a machine of the run (an
agent), and one that leaves without ranks does the run no harm. The secret is in the ranks' environment, on no command line. A bad address
is refused before anything runs.

usage: check_listen.py LAUNCHER"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import environment  # noqa: E402

MAGIC = 0x58423453
HELLO = 136  # bytes of remote::Hello


def wire_version():
    header = Path(__file__).resolve().parents[3] / "include" / "s4bxi" / "wire.hpp"
    for line in header.read_text().splitlines():
        if line.startswith("inline constexpr uint32_t kVersion"):
            return int(line.split("=")[1].strip(" ;"))
    sys.exit("no kVersion in wire.hpp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """The local addresses of the TCP sockets listening on `port` (from /proc/net/tcp*)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":
                found.append(address)
    return found


def exchange(port, payload, expected=None):
    """Sends `payload`, returns what the server sent back before it closed (or its first
    `expected` bytes: an accepted agent's connection stays open)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        if payload:
            s.sendall(payload)
        received = b""
        try:
            while (expected is None or len(received) < expected) and (chunk := s.recv(4096)):
                received += chunk
        except ConnectionResetError:
            pass
        return received


def hello(version, secret, rank=3, machine=b"m9"):
    return struct.pack("<IIHHI", MAGIC, version, 1, 0, HELLO) + secret + machine.ljust(64, b"\0") + \
        struct.pack("<II", rank, 4242)


def main():
    launcher = sys.argv[1]
    failures = []
    version = wire_version()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="s4bxi-listen-") as work:
        fifo = Path(work) / "go"
        os.mkfifo(fifo)
        # The rank waits outside the simulation, on the FIFO, while the test connects.
        run = subprocess.Popen([launcher, "-q", "--cpu-model", "zero", "--listen", f"127.0.0.1:{port}", "-n", "1",
                                "/bin/sh", "-c", f"read line < {fifo}"], env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not listening(port) and time.monotonic() < deadline and run.poll() is None:
                time.sleep(0.05)
            addresses = listening(port)
            print(f"listening on port {port}: {addresses}")
            if addresses != ["0100007F"]:
                failures.append(f"want one listener on 127.0.0.1:{port}, found {addresses}")
            secret = None
            for environ in Path("/proc").glob("[0-9]*/environ"):
                try:
                    for entry in environ.read_bytes().split(b"\0"):
                        if entry.startswith(b"S4BXI_RUN_SECRET=") and \
                                str(fifo).encode() in (environ.parent / "cmdline").read_bytes():
                            secret = entry.split(b"=", 1)[1]
                except OSError:
                    continue
            if not secret or len(secret) != 64:
                failures.append(f"the rank's environment has no S4BXI_RUN_SECRET of 64 characters: {secret!r}")
                secret = b"0" * 64
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    if secret in cmdline.read_bytes():
                        failures.append(f"the secret is on the command line of process {cmdline.parent.name}")
                except OSError:
                    continue
            wrong = bytes(reversed(secret))
            for name, payload in [("nothing", b""), ("not s4bxi", b"GET / HTTP/1.0\r\n\r\n" + b" " * 200),
                                  ("another version", hello(version + 1, secret)),
                                  ("a wrong secret", hello(version, wrong))]:
                answer = exchange(port, payload)
                print(f"{name}: {len(answer)} bytes back")
                if answer:
                    failures.append(f"a connection sending {name} got an answer: {answer[:80]!r}")
            answer = exchange(port, hello(version, secret), 16 + 256)
            accepted = len(answer) == 16 + 256 and struct.unpack_from("<IIHHIi", answer) == (MAGIC, version, 2, 0, 256, 1)
            print(f"the run's secret: {'accepted' if accepted else answer[:40]}")
            if not accepted:
                failures.append(f"a connection with the run's secret got {answer[:120]!r}")
            fifo.write_text("go\n")
            out, err = run.communicate(timeout=60)
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
    print(err.strip())
    if run.returncode != 0:
        failures.append(f"the run ended with exit status {run.returncode}")
    for expected in ["no greeting", "not an s4bxi peer", "built from another s4bxi", "wrong secret",
                     "machine m9 joined the run"]:
        if expected not in err:
            failures.append(f"the server's log lacks '{expected}'")
    # A bad address is refused before anything runs.
    bad = subprocess.run([launcher, "-q", "--listen", "256.1.1.1:5", "-n", "1", "/bin/true"], env=environment(),
                         capture_output=True, text=True, timeout=60)
    print(f"--listen 256.1.1.1:5: exit status {bad.returncode}: {bad.stderr.strip()[:200]}")
    if bad.returncode == 0 or "--listen 256.1.1.1:5" not in bad.stderr:
        failures.append(f"--listen 256.1.1.1:5 was not refused naming the address: {bad.stderr[-300:]}")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("ok: the listener takes only this run's processes, on the address given")
    return 0


if __name__ == "__main__":
    sys.exit(main())
