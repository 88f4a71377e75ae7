#!/usr/bin/env python3
"""Two ranks stuck in PtlEQWait: the launcher exits non-zero within seconds, names the
deadlock and what every rank waits on, and leaves no process behind. Ranks that poll in
vain are reported after 10 s of wall time, or --deadlock-timeout if shorter, which the
report names."""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
errors = []
# Waiting, then polling in vain (the program's argument "poll"), with the default and a
# shorter deadlock timeout.
cases = (([], [], "PtlEQWait", None), ([], ["poll"], "PtlEQGet", "for 10 s of wall time"),
         (["--deadlock-timeout", "2"], ["poll"], "PtlEQGet", "for 2 s of wall time"))
for options, args, call, window in cases:
    run = run_command(command(launcher, program, *args, options=options, quiet=False), wall_timeout=60,
                      new_session=True)
    elapsed = run.wall
    if run.returncode == 0:
        errors.append(f"{call}: exit status 0")
    if "deadlock" not in run.stderr:
        errors.append(f"{call}: no 'deadlock' in the diagnosis")
    if window and window not in run.stderr:
        errors.append(f"{call} {options}: the report does not say '{window}'")
    for rank in (0, 1):
        if f"rank {rank} " not in run.stderr or call not in run.stderr:
            errors.append(f"rank {rank} and its {call} are not named\n--- stderr ---\n{run.stderr}")
leftover = subprocess.run(["pgrep", "-x", "deadlock"], capture_output=True, text=True).stdout.split()
if leftover:
    errors.append(f"processes left behind: {leftover}")
if errors:
    sys.exit("; ".join(errors) + f"\n--- stderr ---\n{run.stderr}")
print(f"deadlock reported in {elapsed:.2f} s with status {run.returncode}")
