#!/usr/bin/env python3
"""The Debian package: tools/package builds s4bxi_<version>_amd64.deb; its file list (dpkg -c)
has the launcher, the server, the library with its headers and pkg-config file, the
platforms, the docs, the man page and the demo program; its Depends names the libraries the
binaries link; unpacked into a scratch root, its launcher runs the demo program on 2 ranks,
on a shipped platform found by name, and a 64-rank job on the built-in platform sized by
the job. Skipped (77) without dpkg-buildpackage's tools and no way to install them.

usage: check_package.py SOURCE_ROOT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import environment, launch  # noqa: E402

SKIP = 77
EXPECTED = ["usr/bin/s4bxi-launch", "usr/bin/s4bxi-plot", "usr/libexec/s4bxi/s4bxi-simkernel", "usr/libexec/s4bxi/build-openmpi-portals4",
            "usr/libexec/s4bxi/build-sos",
            "usr/libexec/s4bxi/examples/pingpong", "usr/include/portals4.h", "usr/include/pmi.h",
            "usr/lib/x86_64-linux-gnu/libportals.so.4", "usr/lib/x86_64-linux-gnu/pkgconfig/portals4.pc",
            "usr/share/s4bxi/platforms/default.toml", "usr/share/s4bxi/platforms/quito.toml",
            "usr/share/man/man1/s4bxi-launch.1.gz", "usr/share/doc/s4bxi/usage.md.gz",
            "usr/share/doc/s4bxi/examples/pingpong.c"]


def main():
    source = Path(sys.argv[1])
    if not shutil.which("dpkg-deb") or (os.geteuid() != 0 and not shutil.which("dpkg-buildpackage")):
        print("SKIP: dpkg-buildpackage is not installed and cannot be (not root)")
        return SKIP
    errors = []
    with tempfile.TemporaryDirectory() as work:
        built = subprocess.run(["bash", str(source / "tools" / "package"), "--out", work], capture_output=True,
                               text=True, timeout=1500)
        if built.returncode != 0:
            print(built.stdout, built.stderr)
            return 1
        deb = Path(built.stdout.strip().splitlines()[-1])
        listing = subprocess.run(["dpkg", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
        files = {line.split()[5].lstrip("./") for line in listing.splitlines() if len(line.split()) >= 6}
        errors += [f"{name} is not in the package" for name in EXPECTED if name not in files]
        depends = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True).stdout
        print(f"{deb.name}: {len(files)} files; Depends: {depends.strip()}")
        for library in ("libsimgrid", "libfmt", "libseccomp", "libunwind"):
            if library not in depends:
                errors.append(f"Depends does not name {library}")
        root = Path(work) / "root"
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
        launcher = root / "usr/bin/s4bxi-launch"
        demo = root / "usr/libexec/s4bxi/examples/pingpong"
        env = environment()
        for arguments, ranks, nodes in ((["-n", "2", str(demo)], 2, 2),
                                        (["--platform", "quito", "-n", "2", str(demo)], 2, None),
                                        (["-np", "64", "true"], 64, 64)):
            summary = Path(work) / "summary.json"
            # The launcher's own spellings of the ranks and platform, as a user would give them.
            run = launch(launcher, *arguments, ranks=None, summary=summary, wall_timeout=300, env=env)
            if run.returncode != 0:
                errors.append(f"{' '.join(arguments)}: exit status {run.returncode}: {run.stderr[-1000:]}")
                continue
            data = json.loads(summary.read_text())
            print(f"unpacked launcher {' '.join(arguments)}: {data['world_size']} ranks on "
                  f"{data['platform']['nodes']} nodes of '{data['platform']['name']}'")
            if data["world_size"] != ranks or (nodes and data["platform"]["nodes"] != nodes):
                errors.append(f"{' '.join(arguments)}: {data['world_size']} ranks on {data['platform']['nodes']} nodes")
            if arguments[0] == "--platform" and data["platform"]["name"] != "quito":
                errors.append(f"--platform quito ran on '{data['platform']['name']}'")
    if errors:
        print("FAIL: " + "; ".join(errors), file=sys.stderr)
        return 1
    print("ok: the package holds what it should and its launcher runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
