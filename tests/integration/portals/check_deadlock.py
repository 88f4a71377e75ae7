#!/usr/bin/env python3
"""Two ranks stuck in PtlEQWait: the launcher exits non-zero within seconds, names the
deadlock and what every rank waits on, and leaves no process behind. Ranks that poll in
vain are reported after 10 s of wall time, or --deadlock-timeout if shorter, which the
report names."""
import subprocess
import sys
import time

launcher, program = sys.argv[1], sys.argv[2]
errors = []
# Waiting, then polling in vain (the program's argument "poll"), with the default and a
# shorter deadlock timeout.
cases = (([], [], "PtlEQWait", None), ([], ["poll"], "PtlEQGet", "for 10 s of wall time"),
         (["--deadlock-timeout", "2"], ["poll"], "PtlEQGet", "for 2 s of wall time"))
for options, args, call, window in cases:
    start = time.monotonic()
    run = subprocess.run([launcher, "-n", "2", "--cpu-model", "zero"] + options + [program] + args,
                         capture_output=True, text=True, timeout=60, start_new_session=True)
    elapsed = time.monotonic() - start
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
