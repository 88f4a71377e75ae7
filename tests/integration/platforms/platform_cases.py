#!/usr/bin/env python3
"""Integration cases of the platform and configuration: --print-config and the precedence
of --set over S4BXI_* over the platform file over the defaults, bad values, runs on every
shipped platform file and on a plugin, traces, the NI limits.

usage: platform_cases.py LAUNCHER PINGPONG PLUGIN PRINT_LIMITS CASE
"""

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.cases import Failure, check, run_case  # noqa: E402
from testkit.launch import environment, run as launch_run  # noqa: E402

LAUNCHER, PINGPONG, PLUGIN, PRINT_LIMITS, CASE = sys.argv[1:6]
HERE = Path(__file__).resolve().parent
PLATFORMS = HERE.parents[2] / "platforms"
SHIPPED = ["default", "quito", "fat_tree_64", "dragonfly_example", "torus_example"]


def launch(args, env=None, timeout=120):
    run = launch_run([LAUNCHER] + args, wall_timeout=timeout, env=environment(env))
    run.text = f"status {run.returncode}\n--- stdout\n{run.stdout}--- stderr\n{run.stderr}---"
    return run


def config_line(output, key):
    """(value, origin) of `key` in a --print-config output."""
    for line in output.splitlines():
        m = re.match(rf"^{re.escape(key)} = (.*?)\s+# (.*)$", line)
        if m:
            return m[1], m[2]
    raise Failure(f"{key} not printed:\n{output}")


def pingpong(platform_args, extra=None, env=None):
    run = launch(["-q", "-n", "2", "--cpu-model", "zero", *platform_args, *(extra or []), PINGPONG], env=env)
    check(run.returncode == 0, f"ping-pong failed:\n{run.text}")
    times = {int(m[1]): float(m[2]) for m in re.finditer(r"size=(\d+) iterations=\d+ one_way_ns=([\d.]+)", run.stdout)}
    check(sorted(times) == [8 << i for i in range(18)], f"unexpected sizes {sorted(times)}:\n{run.text}")
    return times


def case_print_config_precedence():
    platform = str(HERE / "precedence.toml")
    run = launch(["--print-config", "--platform", platform, "--set", "nic.quick_acks=true", "--trace", "/tmp/x"],
                 env={"S4BXI_MAX_RETRIES": "7", "S4BXI_QUICK_ACKS": "0", "S4BXI_E2E_OFF": "1"})
    check(run.returncode == 0, f"--print-config failed:\n{run.text}")
    out = run.stdout
    check(config_line(out, "nic.command_queue_depth") == ("16", "default"), "default")
    check(config_line(out, "bxi.link_latency") == ("1e-06", f"platform file {platform}:6"), "platform file")
    check(config_line(out, "nic.max_retries") == ("7", "environment S4BXI_MAX_RETRIES"), "environment over file")
    check(config_line(out, "nic.e2e") == ("false", "environment S4BXI_E2E_OFF"), "S4BXI_E2E_OFF is inverted")
    check(config_line(out, "nic.quick_acks") == ("true", "--set"), "--set over environment over file")
    check(config_line(out, "trace.folder") == ('"/tmp/x"', "--trace"), "--trace")
    check(config_line(out, "platform.nodes") == ("2", f"platform file {platform}:3"), "nodes")
    # Every key of the model is printed, and the output reads back as a platform file.
    for key in ["nic.timings.event_size", "nic.max_inflight_to_process", "pcie.shared_latency", "trace.computation"]:
        config_line(out, key)
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as copy:
        copy.write(out)
        copy.flush()
        again = launch(["--print-config", "--platform", copy.name])
        check(again.returncode == 0, f"the print-out does not read back:\n{again.text}")
        check(config_line(again.stdout, "nic.max_retries")[0] == "7", "value read back")


def case_print_config_topology():
    run = launch(["--print-config", "--platform", str(PLATFORMS / "fat_tree_64.toml")])
    check(run.returncode == 0, run.text)
    check(config_line(run.stdout, "platform.nodes") == ("64", "derived from topology.parameters"), run.stdout)
    check(config_line(run.stdout, "topology.parameters")[0] == '"2;8,8;1,4;1,1"', run.stdout)
    run = launch(["--print-config", "--platform", str(PLATFORMS / "dragonfly_example.toml")])
    check(config_line(run.stdout, "topology.link_latency")[0] == "3e-07", run.stdout)


def expect_error(run, status, *words):
    check(run.returncode == status, f"expected status {status}:\n{run.text}")
    for word in words:
        check(word in run.stderr, f"'{word}' missing from the error:\n{run.text}")
    check(run.stdout == "" or "size=" not in run.stdout, f"something ran:\n{run.text}")


def case_bad_set():
    expect_error(launch(["--set", "nic.quick_acks=maybe", "-n", "1", "true"]), 2, "nic.quick_acks", "maybe")
    expect_error(launch(["--set", "nic.quikc_acks=1", "-n", "1", "true"]), 2, "nic.quikc_acks", "unknown key")
    expect_error(launch(["--set", "nic.quick_acks", "-n", "1", "true"]), 2, "KEY=VALUE")
    expect_error(launch(["--set", "bxi.link_bandwidth=-5", "--print-config"]), 2, "bxi.link_bandwidth", "-5")


def case_bad_env():
    expect_error(launch(["-n", "1", "true"], env={"S4BXI_E2E_OFF": "yes"}), 2, "S4BXI_E2E_OFF", "yes")
    expect_error(launch(["-n", "1", "true"], env={"S4BXI_RETRY_TIMEOUT": "-1"}), 2, "S4BXI_RETRY_TIMEOUT")
    expect_error(launch(["--print-config"], env={"S4BXI_QUICK_ACK": "1"}), 2, "S4BXI_QUICK_ACK")


def case_bad_combination():
    # Values that are fine alone but not together: the server says so, status 13.
    fat_tree = str(PLATFORMS / "fat_tree_64.toml")
    expect_error(launch(["--print-config", "--platform", fat_tree, "--set", "platform.nodes=10"]), 13,
                 "platform.nodes = 10", "64 nodes", "--set")
    expect_error(launch(["-n", "2", "--platform", fat_tree, "--set", "platform.nodes=10", PINGPONG]), 13,
                 "platform.nodes")
    expect_error(launch(["-n", "1", "--set", "platform.plugin=/nonexistent/plugin.so", "true"]), 13,
                 "/nonexistent/plugin.so")


def case_pingpong_shipped():
    reference = pingpong([])
    for name in SHIPPED:
        times = pingpong(["--platform", str(PLATFORMS / f"{name}.toml")])
        if name in ("default", "quito", "fat_tree_64", "dragonfly_example"):
            # Ranks 0 and 1 are on the same switch / router: the same timings as one switch.
            check(times == reference, f"{name}: {times} differs from one switch {reference}")
        elif name == "torus_example":
            # Neighbours on the torus: one 100 ns router link more than one switch.
            for size, t in times.items():
                check(abs(t - reference[size] - 100.0) <= 1.0, f"torus, size {size}: {t} vs {reference[size]} + 100")
        print(f"{name}: ok")


def case_pingpong_far():
    """On a fat tree with one node per leaf switch, ranks 0 and 1 cross two switch-to-switch
    links: 2 x 200 ns more than one switch, whatever the size (same bandwidths)."""
    reference = pingpong([])
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as platform:
        platform.write('[platform]\ntopology = "fat_tree"\n[topology]\nparameters = "2;1,4;1,2;1,1"\n'
                       'link_latency = 200e-9\n')
        platform.flush()
        far = pingpong(["--platform", platform.name])
    for size, t in far.items():
        check(abs(t - reference[size] - 400.0) <= 1.0, f"size {size}: {t} vs {reference[size]} + 400")


def case_set_changes_timing():
    base = pingpong([])
    slower = pingpong(["--set", "bxi.link_latency=1e-6"])
    for size in base:
        check(abs(slower[size] - base[size] - 1000.0) <= 1.0, f"size {size}: {slower[size]} vs {base[size]} + 1000")
    env = pingpong([], env={"S4BXI_BXI_LINK_LATENCY": "1e-6"})
    check(env == slower, "S4BXI_BXI_LINK_LATENCY = --set bxi.link_latency")
    both = pingpong(["--set", "bxi.link_latency=5e-7"], env={"S4BXI_BXI_LINK_LATENCY": "1e-6"})
    check(both == base, "--set wins over the environment")


def case_plugin():
    plugin_file = str(HERE / "plugin.toml")
    times = pingpong(["--platform", plugin_file, "--set", f"platform.plugin={PLUGIN}"])
    check(times == pingpong(["--platform", str(PLATFORMS / "quito.toml")]), "the plugin builds quito's links")
    run = launch(["-n", "3", "--cpu-model", "zero", "--platform", plugin_file, "--set", "platform.nodes=3", "--set",
                  f"platform.plugin={PLUGIN}", PINGPONG])
    check(run.returncode != 0 and "exactly 2 nodes" in run.stderr, f"a failing plugin is reported:\n{run.text}")


def case_trace():
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "trace"
        pingpong(["--trace", str(folder)])
        files = sorted(folder.glob("log_*.csv"))
        check(files and files[0].name == "log_0.csv", f"no log_0.csv in {list(folder.iterdir())}")
        for f in files:
            lines = f.read_text().splitlines()
            check(lines[0] == "operation_type,initiator_nid,target_nid,start_time,end_time", f"{f}: header {lines[:1]}")
            check(len(lines) <= 10001, f"{f}: more than 10 000 rows")
            for line in lines[1:]:
                check(re.fullmatch(r"\d+,\d+,\d+,[-+.\deE]+,[-+.\deE]+", line), f"{f}: bad row {line!r}")
        env_folder = Path(tmp) / "from_env"
        pingpong([], env={"S4BXI_LOG_FOLDER": str(env_folder)})
        check((env_folder / "log_0.csv").exists(), "S4BXI_LOG_FOLDER traces too")
        off = Path(tmp) / "off"
        pingpong([], env={"S4BXI_LOG_FOLDER": "/dev/null"})
        check(not off.exists(), "/dev/null means no trace")


# The built-in NI limits (default, cap): the reference simulator's, but for max_iovecs (0
# there: it has no I/O vectors) and the ordered sizes (0 there, on which Open MPI loops).
REFERENCE_LIMITS = {
    "max_entries": (4080, 16319), "max_unexpected_headers": (16319, 16319), "max_mds": (1024, 8191),
    "max_cts": (1024, 2047), "max_eqs": (960, 2046), "max_pt_index": (255, 255), "max_iovecs": (1048576, 1048576),
    "max_list_size": (16582, 65535), "max_triggered_ops": (16378, 16378), "max_msg_size": (67108864, 67108864),
    "max_atomic_size": (1024, 1024), "max_fetch_atomic_size": (64, 64), "max_waw_ordered_size": (64, 64),
    "max_war_ordered_size": (64, 64), "max_volatile_size": (64, 64),
}


def ni_limits(platform_args, env=None):
    """{"default" | "caps" | "desired100" | "enforced": {name: value}} as print_limits prints them."""
    run = launch(["-q", "-n", "1", "--cpu-model", "zero", *platform_args, PRINT_LIMITS], env=env)
    check(run.returncode == 0, f"print_limits failed:\n{run.text}")
    reported = {}
    for line in run.stdout.splitlines():
        what, *pairs = line.split()
        reported[what] = {name: int(value) for name, value in (pair.split("=") for pair in pairs)}
    check(sorted(reported) == ["caps", "default", "desired100", "enforced"], f"unexpected output:\n{run.text}")
    return reported


def case_ni_limits():
    # The built-in values: the reference's defaults without desired limits, the caps with
    # desired limits of 0, min(desired, cap) otherwise.
    reported = ni_limits([])
    for name, (default, cap) in REFERENCE_LIMITS.items():
        check(reported["default"][name] == default, f"default {name}: {reported['default'][name]} != {default}")
        check(reported["caps"][name] == cap, f"cap {name}: {reported['caps'][name]} != {cap}")
        check(reported["desired100"][name] == min(100, cap), f"desired 100 {name}: {reported['desired100'][name]}")
    check(reported["default"]["features"] == 7, "features: bind inaccessible, total data ordering, coherent atomics")
    check(reported["enforced"] == {"highest_pt_index": 255, "eqs": 64}, f"enforced: {reported['enforced']}")

    # [nic.limits] and [nic.limit_caps] in the platform file, then the environment and --set.
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as platform:
        platform.write("[nic.limits]\nmax_entries = 100\nmax_pt_index = 31\nmax_mds = 40\nmax_msg_size = 4096\n"
                       "max_iovecs = 8\n[nic.limit_caps]\nmax_mds = 50\nmax_msg_size = 65536\nmax_iovecs = 16\n")
        platform.flush()
        reported = ni_limits(["--platform", platform.name, "--set", "nic.limits.max_cts=7"],
                             env={"S4BXI_NIC_LIMITS_MAX_EQS": "9", "S4BXI_NIC_LIMIT_CAPS_MAX_PT_INDEX": "63"})
    expected = {"max_entries": (100, 16319, 100), "max_pt_index": (31, 63, 63), "max_mds": (40, 50, 50),
                "max_msg_size": (4096, 65536, 100), "max_iovecs": (8, 16, 16), "max_cts": (7, 2047, 100),
                "max_eqs": (9, 2046, 100), "max_atomic_size": (1024, 1024, 100)}
    for name, values in expected.items():
        got = tuple(reported[what][name] for what in ("default", "caps", "desired100"))
        check(got == values, f"{name}: reported (default, cap, desired 100) {got}, expected {values}")
    # The NI enforces what it reported.
    check(reported["enforced"] == {"highest_pt_index": 31, "eqs": 9}, f"enforced: {reported['enforced']}")


def case_bad_ni_limits():
    def platform_file(text):
        f = tempfile.NamedTemporaryFile("w", suffix=".toml")
        f.write(text)
        f.flush()
        return f

    # A default above its cap: the server names both keys, their values and the file.
    with platform_file("[nic.limits]\nmax_mds = 9000\n") as f:
        expect_error(launch(["-n", "1", "--platform", f.name, PRINT_LIMITS]), 13, f.name, "nic.limits.max_mds = 9000",
                     "nic.limit_caps.max_mds = 8191", "cap")
    with platform_file("[nic.limit_caps]\nmax_eqs = 100\n") as f:
        expect_error(launch(["--print-config", "--platform", f.name]), 13, f"platform file {f.name}:2",
                     "nic.limits.max_eqs = 960", "nic.limit_caps.max_eqs = 100")
    expect_error(launch(["--print-config", "--set", "nic.limits.max_triggered_ops=20000"]), 13,
                 "nic.limits.max_triggered_ops = 20000", "nic.limit_caps.max_triggered_ops = 16378", "--set")
    # Values Open MPI cannot work with.
    with platform_file("[nic.limits]\nmax_pt_index = 8\n") as f:
        expect_error(launch(["-n", "1", "--platform", f.name, PRINT_LIMITS]), 13, f"{f.name}:2",
                     "nic.limits.max_pt_index", "8", ">= 16", "Open MPI")
    for key in ["nic.limits.max_msg_size", "nic.limit_caps.max_waw_ordered_size"]:
        table, name = key.rsplit(".", 1)
        with platform_file(f"[{table}]\n{name} = 0\n") as f:
            expect_error(launch(["--print-config", "--platform", f.name]), 13, f.name, key, ">= 1", "Open MPI")
    # The same values given as text are refused by the launcher before anything starts.
    expect_error(launch(["--print-config", "--set", "nic.limit_caps.max_pt_index=8"]), 2,
                 "nic.limit_caps.max_pt_index", "'8'", "Open MPI")
    expect_error(launch(["-n", "1", PRINT_LIMITS], env={"S4BXI_NIC_LIMITS_MAX_ATOMIC_SIZE": "0"}), 2,
                 "S4BXI_NIC_LIMITS_MAX_ATOMIC_SIZE", "Open MPI")


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
