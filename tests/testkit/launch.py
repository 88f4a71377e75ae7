"""The launcher's command line and its run, written once for the tests and benchmarks:
`command` builds `s4bxi-launch -q -n RANKS` with the CPU model, a simulated-run timeout,
platform settings, other options and a summary file, then the program and its arguments
(or `-- mpirun -np RANKS program ...` for an MPI run); `run` runs a command line and
returns its outcome with its wall time; `launch` is both; `environment` is the environment
a run gets."""
import os
import signal
import subprocess
import time


def command(launcher, program, *arguments, ranks=2, mpirun=False, cpu_model="zero", timeout=None, settings=(),
            options=(), summary=None, quiet=True, separate=False):
    """The command that runs `program` with `arguments` on `ranks` ranks through `launcher`.
    `ranks` None leaves -n out (the launcher's single rank, or `program` and `arguments`
    carry the launcher's own options); `mpirun` runs the program as `-- mpirun -np RANKS`
    instead; `cpu_model` None leaves the launcher's default; `timeout` is the launcher's
    --timeout (the run's own limit, s); `settings` are --set KEY=VALUE pairs; `options` go
    as they are; `quiet` False leaves -q out; `separate` puts `--` before the program (the
    launcher's command mode: a program such as mpirun given with its own options)."""
    line = [str(launcher)] + (["-q"] if quiet else [])
    if ranks is not None and not mpirun:
        line += ["-n", str(ranks)]
    if cpu_model:
        line += ["--cpu-model", cpu_model]
    if timeout is not None:
        line += ["--timeout", str(timeout)]
    for setting in settings:
        line += ["--set", setting]
    line += [str(option) for option in options]
    if summary is not None:
        line += ["--summary", str(summary)]
    if separate or mpirun:
        line.append("--")
    if mpirun:
        line += ["mpirun", "-np", str(ranks)]
    return line + [str(program), *(str(argument) for argument in arguments)]


def alternating_models(period_ns, count):
    """A network.model schedule (docs/network-models.md) of `count` phases, detailed then flow
    in turn, each `period_ns` nanoseconds long, from 0."""
    return ",".join(f"{'flow' if i % 2 else 'detailed'}@{i * period_ns}ns" for i in range(count))


def environment(extra=None, mpi=False):
    """The caller's environment for a run: without its S4BXI_* variables (the launcher
    rejects unknown ones, and a run gets the launcher's own settings) and LD_PRELOAD, with
    `mpi` also without its OMPI_MCA_* variables (Open MPI's settings are the launcher's);
    then the variables of `extra`."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("S4BXI_") and not (mpi and key.startswith("OMPI_MCA_"))}
    env.pop("LD_PRELOAD", None)
    env.update(extra or {})
    return env


class LaunchTimeout(subprocess.TimeoutExpired):
    """A run that did not finish within its wall-clock bound (it was killed)."""

    def __str__(self):
        name = os.path.basename(str(self.cmd[0])) if self.cmd else "the command"
        what = "the launcher" if name == "s4bxi-launch" else name
        return f"{what} did not finish within {self.timeout:g} s\n{self.stderr or ''}"


def run(line, wall_timeout=120, env=None, cwd=None, interrupt_after=None, new_session=False, stdin=subprocess.DEVNULL,
        errors=None):
    """Runs the command `line` (stdin empty unless given, output captured as text, decoded
    with the `errors` handler of str.decode: strict unless given) and returns the
    finished process, with its wall time in seconds as `wall` and its process id as `pid`. `wall_timeout` (None: no
    bound) is the caller's wait: past it the process (with `new_session`, its whole
    session, which it then leads) is killed and LaunchTimeout raised. `interrupt_after`
    sends it SIGINT after that many seconds."""
    start = time.monotonic()
    with subprocess.Popen(line, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors=errors, start_new_session=new_session) as process:
        try:
            if interrupt_after is not None:
                time.sleep(interrupt_after)
                process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=wall_timeout)
        except subprocess.TimeoutExpired:
            if new_session:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
            stdout, stderr = process.communicate()
            raise LaunchTimeout(line, wall_timeout, stdout, stderr) from None
    done = subprocess.CompletedProcess(line, process.returncode, stdout, stderr)
    done.wall, done.pid = time.monotonic() - start, process.pid
    return done


def launch(launcher, program, *arguments, wall_timeout=120, env=None, cwd=None, **line):
    """Runs command(...) (keywords as there) through run (wall_timeout, env, cwd as there)."""
    return run(command(launcher, program, *arguments, **line), wall_timeout=wall_timeout, env=env, cwd=cwd)
