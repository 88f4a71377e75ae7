"""The helpers the tests and benchmarks share: the case harness (cases), the model's
formulas (model), the dated steps of the timeline programs (steps), run summaries and
their schema (run_summary), the OSU build (osu), and the launcher's command line (launch).
A script finds the package with one line, `sys.path.insert(0, <the tests folder>)`."""
