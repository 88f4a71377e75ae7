"""Checks that print what they found as they go, and keep the problems for the end: the
multi-machine tests, whose steps each run programs on several machines."""


class Check:
    def __init__(self):
        self.errors = []

    def __call__(self, condition, found, problem):
        """Prints what was `found`; records `problem` unless `condition`."""
        print(f"  {'ok' if condition else 'FAIL'}: {found}", flush=True)
        if not condition:
            self.errors.append(problem)
