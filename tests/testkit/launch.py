"""The launcher's command line, written once for the tests: `s4bxi-launch -q -n RANKS` with
the CPU model, a simulated-run timeout, platform settings, other options and a summary
file, then the program and its arguments."""
import subprocess


def command(launcher, program, *arguments, ranks=2, cpu_model="zero", timeout=None, settings=(), options=(),
            summary=None):
    """The command that runs `program` with `arguments` on `ranks` ranks through `launcher`.
    `cpu_model` None leaves the launcher's default; `timeout` is the launcher's --timeout (the
    run's own limit, s); `settings` are --set KEY=VALUE pairs; `options` go as they are."""
    line = [str(launcher), "-q", "-n", str(ranks)]
    if cpu_model:
        line += ["--cpu-model", cpu_model]
    if timeout is not None:
        line += ["--timeout", str(timeout)]
    for setting in settings:
        line += ["--set", setting]
    line += [str(option) for option in options]
    if summary is not None:
        line += ["--summary", str(summary)]
    return line + [str(program), *(str(argument) for argument in arguments)]


def launch(launcher, program, *arguments, wall_timeout=120, env=None, cwd=None, **line):
    """Runs command(...) (keywords as there) and returns the finished process, its output
    captured as text. `wall_timeout` bounds the test's wait for it."""
    return subprocess.run(command(launcher, program, *arguments, **line), capture_output=True, text=True,
                          timeout=wall_timeout, env=env, cwd=cwd)
