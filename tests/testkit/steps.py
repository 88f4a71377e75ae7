"""The "case=... step=... t=..." lines of the timeline programs (portals/timeline_steps.h),
read and compared with the dates the model expects."""
import re
from collections import defaultdict


def parse(stdout):
    """{case: {step: date in ns}}."""
    steps = defaultdict(dict)
    for case, step, t in re.findall(r"case=(\S+) step=(\S+) t=(\d+)", stdout):
        steps[case][step] = int(t)
    return steps


def compare(expected, steps, tolerance=lambda case, step, want: 1.0):
    """Prints every step's date after its case's call against `expected` ({case: {step:
    date in s}}) and returns the failures. The default tolerance is 1 ns: clock reads are
    whole ns."""
    failures = []
    for case, timeline in expected.items():
        for step, date in timeline.items():
            want = date * 1e9
            if case not in steps or step not in steps[case] or "call" not in steps[case]:
                failures.append(f"{case} {step}: missing")
                continue
            got = steps[case][step] - steps[case]["call"]
            ok = abs(got - want) <= tolerance(case, step, want)
            print(f"{case:15s} {step:8s} {got:10d} ns  model {want:12.3f} ns  {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{case} {step}: {got} ns, model {want:.3f} ns")
    return failures
