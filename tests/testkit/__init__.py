"""The helpers the tests and benchmarks share: the case harness (cases), the model's
formulas (model), the dated steps of the timeline programs (steps), run summaries and
their schema (run_summary), the OSU build and programs (osu), LULESH's and Quicksilver's
(apps), the launcher's command line and its run (launch), the MPI runs' environment
(mpi_env), Sandia OpenSHMEM's build (sos), the reference simulator's side of a
comparison (reference), and machines made of Linux namespaces (machines). A script
finds the package with one line, `sys.path.insert(0, <the tests folder>)`."""
