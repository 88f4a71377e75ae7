"""The harness shared by the integration drivers (launcher/launcher_cases.py,
platforms/platform_cases.py, time/time_cases.py): a case is a function `case_<name>()`
that raises Failure (through check) when the behaviour is wrong; the driver runs the case
named on its command line, prints "ok <case>" or "FAIL <case>: <why>", and exits 0, 1, or
2 for an unknown case."""
import subprocess
import sys


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def run_case(namespace, case):
    """Runs case_<case> of `namespace` (a driver's globals()); returns the exit status."""
    cases = {name[len("case_"):].replace("_", "-"): f for name, f in namespace.items() if name.startswith("case_")}
    function = cases.get(case)
    if function is None:
        print(f"unknown case {case} (known: {', '.join(cases)})", file=sys.stderr)
        return 2
    try:
        function()
    except Failure as failure:
        print(f"FAIL {case}: {failure}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as timeout:  # testkit.launch.LaunchTimeout says which command and its errors
        print(f"FAIL {case}: {timeout}", file=sys.stderr)
        return 1
    print(f"ok {case}")
    return 0
