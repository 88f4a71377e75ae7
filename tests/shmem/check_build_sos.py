#!/usr/bin/env python3
"""tools/build-sos on bad input: each case ends with a clear one-line error and a non-zero
status before anything is built; with no source anywhere, status 3 and a message that says
how to provide one. The script is run from a copy in a scratch tree, so that no tarball
beside the clone or in the user's cache is found.

usage: check_build_sos.py SOURCE_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from run_shmem import verdict


def main():
    root = Path(sys.argv[1])
    errors = []
    with tempfile.TemporaryDirectory(prefix="s4bxi-build-sos-") as scratch:
        scratch = Path(scratch)
        clone = scratch / "clone"
        (clone / "tools").mkdir(parents=True)
        shutil.copy(root / "tools" / "build-sos", clone / "tools" / "build-sos")
        shutil.copytree(root / "include", clone / "include")
        cache = scratch / "cache"
        not_sos = scratch / "not-sos"
        not_sos.mkdir()
        text_file = scratch / "notes.txt"
        text_file.write_text("not a tarball\n")
        env = {k: v for k, v in os.environ.items() if k != "S4BXI_SOS_SOURCE"}
        env["S4BXI_CACHE_DIR"] = str(cache)

        cases = [
            ("no source anywhere", [], {}, 3, ["no Sandia OpenSHMEM source", "S4BXI_SOS_SOURCE",
                                                str(cache / "sources")]),
            ("a missing path", [str(scratch / "missing.tar.gz")], {}, 1, ["does not exist"]),
            ("a directory that is not SOS", [str(not_sos)], {}, 1, ["is not a Sandia OpenSHMEM source tree"]),
            ("a file that is no tarball", [str(text_file)], {}, 1, ["neither a directory nor a tarball"]),
            ("a missing S4BXI_SOS_SOURCE", [], {"S4BXI_SOS_SOURCE": str(scratch / "gone")}, 1,
             ["S4BXI_SOS_SOURCE", "does not exist"]),
            ("an unknown option", ["--fast"], {}, 1, ["unknown option '--fast'"]),
            ("two sources", [str(not_sos), str(text_file)], {}, 1, ["more than one source"]),
        ]
        for what, args, extra, status, words in cases:
            run = subprocess.run(["bash", str(clone / "tools" / "build-sos"), *args], env={**env, **extra},
                                 capture_output=True, text=True, timeout=30)
            if run.returncode != status:
                errors.append(f"{what}: status {run.returncode}, expected {status} ({run.stderr.strip()})")
            missing = [word for word in words if word not in run.stderr]
            if missing:
                errors.append(f"{what}: the message lacks {missing}: {run.stderr.strip()!r}")
            if run.stdout.strip():
                errors.append(f"{what}: printed a directory on stdout: {run.stdout.strip()!r}")
            if cache.exists() and any(cache.glob("sos-*")):
                errors.append(f"{what}: left an entry in the cache: {sorted(cache.glob('sos-*'))}")
            print(f"{what}: status {run.returncode}: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ''}")
        help_run = subprocess.run(["bash", str(clone / "tools" / "build-sos"), "--help"], env=env,
                                  capture_output=True, text=True, timeout=30)
        if help_run.returncode != 0 or "usage: build-sos" not in help_run.stdout:
            errors.append(f"--help: status {help_run.returncode}, output {help_run.stdout[:200]!r}")
    return verdict(errors, "bad sources, options and variables are refused with a message; no source is status 3")


if __name__ == "__main__":
    sys.exit(main())
