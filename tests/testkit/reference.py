"""The reference simulator's side of a comparison with s4bxi (S4BXI, public repository
S4BXI/S4BXI; tests/reference/compare_with_reference.py says how it is built and run, and
bench/compare_simulators.py times it): the C glue of its programs, a SimGrid platform and
deployment generated from s4bxi's effective configuration, the environment that gives it
s4bxi's NIC knobs, the build of a program as the shared library it loads."""
import os
import re
import subprocess
import sys
from pathlib import Path

from .launch import environment

# timeline_steps.h, shared by the programs, relative to the s4bxi tree
STEPS_DIR = Path("tests/integration/portals")

# Build glue (C). Compiled without the -D renames, so it calls the real functions.
GLUE_COMMON = r"""
#include <portals4.h>
#include <stddef.h>
#include <time.h>
/* Sleep 1 ms of simulated time before finalising the NI (see the script's docstring). */
int compare_PtlNIFini(ptl_handle_ni_t ni)
{
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
    return PtlNIFini(ni);
}
"""
GLUE_REFERENCE = GLUE_COMMON + r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* All ranks share one process in the reference: answer S4BXI_RANK from its rank. */
char *compare_getenv(const char *name)
{
    static char rank_text[16]; /* privatised per rank by the reference's library copies */
    if (strcmp(name, "S4BXI_RANK") == 0) {
        snprintf(rank_text, sizeof rank_text, "%u", s4bxi_get_my_rank());
        return rank_text;
    }
    return getenv(name);
}
"""


def fail(message):
    """Stops the script with `message` and exit status 2 (a usage or run error)."""
    print(f"{Path(sys.argv[0]).stem}: {message}", file=sys.stderr)
    sys.exit(2)


def run(command, **kwargs):
    """Runs a command, stops the script with its output if it fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(map(str, command))} exited with {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def set_options(settings):
    return [item for setting in settings for item in ("--set", setting)]


def s4bxi_config(launcher, platform, settings):
    """Effective s4bxi configuration as {key: value string}."""
    out = run([launcher, "--platform", platform, *set_options(settings), "--print-config"], env=environment()).stdout
    config = {}
    for line in out.splitlines():
        m = re.match(r"^([a-z0-9_.]+) = (\S+)", line)
        if m:
            config[m.group(1)] = m.group(2).strip('"')
    return config


def reference_platform_xml(config):
    """A SimGrid platform with the same nodes and links as the s4bxi configuration. Host
    names quito0, quito1... give NIDs 0, 1... (the reference takes the digits of the name)."""
    nodes = int(config.get("platform.nodes", "0"))
    if config.get("platform.topology") != "switch" or nodes < 2:
        fail("only 'switch' platforms of two nodes or more can be translated for the reference")
    if "platform.nids" in config:
        fail("custom NIDs are not supported (the reference's host names give NIDs 0, 1...)")
    c = {k: float(config[k]) for k in ("platform.core_speed", "pcie.limiter_bandwidth", "pcie.limiter_latency",
                                       "pcie.shared_bandwidth", "pcie.shared_latency", "bxi.link_bandwidth",
                                       "bxi.link_latency")}
    hosts, links, routes = [], [], []
    for n in range(nodes):
        hosts.append(f'    <host id="quito{n}" speed="{c["platform.core_speed"]!r}f"/>\n'
                     f'    <host id="quito{n}_NIC" speed="1Gf"/>')
        links.append(f'    <link id="quito{n}_BXI" bandwidth="{c["bxi.link_bandwidth"]!r}Bps" '
                     f'latency="{c["bxi.link_latency"]!r}s"/>\n'
                     f'    <link id="quito{n}_PCI_FAT" bandwidth="{c["pcie.limiter_bandwidth"]!r}Bps" '
                     f'latency="{c["pcie.limiter_latency"]!r}s" sharing_policy="FATPIPE"/>\n'
                     f'    <link id="quito{n}_PCI" bandwidth="{c["pcie.shared_bandwidth"]!r}Bps" '
                     f'latency="{c["pcie.shared_latency"]!r}s"/>')
        routes.append(f'    <route src="quito{n}" dst="quito{n}_NIC"><link_ctn id="quito{n}_PCI_FAT"/>'
                      f'<link_ctn id="quito{n}_PCI"/></route>\n'
                      f'    <route src="quito{n}_NIC" dst="switch"><link_ctn id="quito{n}_BXI"/></route>')
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1">\n  <zone id="AS0" routing="Floyd">\n' + "\n".join(hosts) +
            '\n    <router id="switch"/>\n' + "\n".join(links) + "\n" + "\n".join(routes) +
            "\n  </zone>\n</platform>\n")


def reference_deployment_xml(args, e2e, ranks=2):
    """Rank n on quitoN (rank 0 on quito0, rank 1 on quito1...); each NIC gets TX and RX
    actors for the compute request VN (1) and response VN (3), and an E2E actor when E2E is on."""
    arguments = "".join(f'<argument value="{a}"/>' for a in args)
    actors = []
    for n in range(ranks):
        actors.append(f'  <actor host="quito{n}" function="user_app">{arguments}'
                      f'<prop id="use_real_memory" value="true"/></actor>')
        for role in ("nic_initiator", "nic_target"):
            for vn in (1, 3):
                actors.append(f'  <actor host="quito{n}_NIC" function="{role}"><prop id="VN" value="{vn}"/></actor>')
        if e2e:
            actors.append(f'  <actor host="quito{n}_NIC" function="nic_e2e"/>')
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1">\n' + "\n".join(actors) + "\n</platform>\n")


# s4bxi configuration key -> (reference variable, conversion). Values equal on both sides.
REFERENCE_KNOBS = {
    "nic.model_pci": ("S4BXI_MODEL_PCI", lambda v: v),
    "nic.model_pci_commands": ("S4BXI_MODEL_PCI_COMMANDS", lambda v: v),
    "nic.quick_acks": ("S4BXI_QUICK_ACKS", lambda v: v),
    "nic.max_retries": ("S4BXI_MAX_RETRIES", lambda v: v),
    "nic.retry_timeout": ("S4BXI_RETRY_TIMEOUT", lambda v: v),
    "nic.max_inflight_to_target": ("S4BXI_MAX_INFLIGHT_TO_TARGET", lambda v: v),
    "nic.max_inflight_to_process": ("S4BXI_MAX_INFLIGHT_TO_PROCESS", lambda v: v),
}
# Knobs the reference hard-codes: s4bxi must use the reference's values.
REFERENCE_FIXED = {
    "nic.command_queue_depth": 16, "nic.e2e_entries": 8192, "nic.timings.pci_latency_heuristic": 2e-7,
    "nic.timings.pci_heuristic_bandwidth": 15.75e9, "nic.timings.packet_size": 512,
    "nic.timings.send_preparation": 2e-9, "nic.timings.tx_after_put_no_dma": 2e-7,
    "nic.timings.tx_after_ptl_ack": 2e-7, "nic.timings.tx_after_get": 2.5e-7,
    "nic.timings.tx_after_response_no_dma": 3e-7, "nic.timings.cpu_after_pio": 2e-7, "nic.timings.command_size": 64,
    "nic.timings.dma_request_size": 64, "nic.timings.event_size": 96, "nic.timings.ack_size": 32,
    "nic.timings.get_request_size": 64, "nic.timings.inline_matching": 8, "nic.timings.inline_non_matching": 16,
    "nic.timings.pio_matching": 408, "nic.timings.pio_non_matching": 416, "nic.timings.e2e_context_size": 64,
}


def reference_env(config, prefix, trace_dir):
    for key, value in REFERENCE_FIXED.items():
        if key in config and abs(float(config[key]) - value) > 1e-12 * abs(value):
            fail(f"{key} = {config[key]}: the reference hard-codes {value}")
    env = environment({"LD_LIBRARY_PATH": f"{prefix / 'lib'}:{os.environ.get('LD_LIBRARY_PATH', '')}",
                     "S4BXI_CPU_THRESHOLD": "1"})
    for key, (variable, convert) in REFERENCE_KNOBS.items():
        if key in config:
            env[variable] = convert(config[key])
    env["S4BXI_E2E_OFF"] = "false" if config.get("nic.e2e", "true") == "true" else "true"
    if trace_dir:
        env["S4BXI_LOG_FOLDER"] = str(trace_dir)
    return env


def build_reference(cc, root, prefix, source, glue_object, out, flags=()):
    """A shared library the reference loads once per rank; `flags` go to the compiler after
    the reference's include directory (which must come first, for its portals4.h)."""
    obj = out.with_suffix(".o")
    run([cc, "-O2", "-fPIC", "-c", f"-I{prefix / 'include'}", f"-I{root / STEPS_DIR}", *flags,
         "-Dgetenv=compare_getenv", "-DPtlNIFini=compare_PtlNIFini", source, "-o", obj])
    run([cc, "-shared", "-o", out, obj, glue_object])
