#!/usr/bin/env python3
"""SOS's whole suite, run twice on 2 and on 4 ranks under --cpu-model zero (run_shmem.py --keep),
gives the same run twice: each program writes the same summary, simulated times
included (less what depends on the host: wall time, pids, memory peaks), and prints the
same lines (in any order: the ranks' outputs interleave as the host runs them). The
programs of known_failures.toml's [differ] table are left out, each with its reason (threads
whose calls reach the server in the host's order), and so are its expected failures.

usage: check_suite_deterministic.py LAUNCHER [--sos PREFIX] [--groups unit,spec-example] [--ranks 2,4]
Exit status 0 (pass), 1 (fail) or 77 (SOS is not built: see run_shmem.py)."""
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from run_shmem import GROUPS, HERE, KNOWN, SKIP, check_setup, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit import run_summary  # noqa: E402
from testkit.run_summary import host_independent  # noqa: E402

RUNS = 2


def main():
    setup = check_setup(sys.argv)
    if setup is None:
        return SKIP
    launcher, prefix = setup
    groups = sys.argv[sys.argv.index("--groups") + 1].split(",") if "--groups" in sys.argv else list(GROUPS)
    rank_counts = [int(n) for n in sys.argv[sys.argv.index("--ranks") + 1].split(",")] if "--ranks" in sys.argv else [2, 4]
    known = tomllib.loads(KNOWN.read_text())
    left_out = set(known.get("differ", {})) | set(known.get("expected", {}))
    errors = []
    compared = 0
    with tempfile.TemporaryDirectory(prefix="s4bxi-shmem-suite-twice-") as work:
        for ranks in rank_counts:
            for group in groups:
                kept = [Path(work) / f"{group}-{ranks}-{run}" for run in range(RUNS)]
                for folder in kept:
                    folder.mkdir()
                    done = subprocess.run([sys.executable, str(HERE / "run_shmem.py"), launcher, group, str(ranks),
                                           "--sos", str(prefix), "--keep", str(folder)],
                                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
                    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()
                    print(f"{group} on {ranks} ranks: {last}")
                for summary_path in sorted(kept[0].glob("*.json")):
                    name = f"{group}/{summary_path.stem}"
                    if name in left_out:
                        continue
                    compared += 1
                    first, second = host_independent(summary_path), host_independent(kept[1] / summary_path.name)
                    if first != second:
                        errors.append(f"{name} on {ranks} ranks: the two runs wrote other summaries: "
                                      + run_summary.why_runs_differ(run_summary.load(summary_path),
                                                                    run_summary.load(kept[1] / summary_path.name)))
                    outputs = [sorted((folder / f"{summary_path.stem}.out").read_text().splitlines())
                               if (folder / f"{summary_path.stem}.out").exists() else None for folder in kept]
                    if outputs[0] != outputs[1]:
                        errors.append(f"{name} on {ranks} ranks: the two runs printed other lines")
    for name, why in sorted(known.get("differ", {}).items()):
        print(f"left out: {name}: {why}")
    return verdict(errors, f"{compared} runs of programs on {', '.join(map(str, rank_counts))} ranks, each twice: "
                           f"identical")


if __name__ == "__main__":
    sys.exit(main())
