"""Run summaries compared from run to run: what two runs of a program under --cpu-model zero
must share, what they may not (the host's figures), and the decisions the server took from
what the host showed, which say why two runs differ when they do (docs/usage.md, "The run
summary"). One list for every check that compares runs."""
import json
import re
from pathlib import Path

# Figures of the host, not of the simulation: the whole run's, then each rank's.
HOST_FIGURES = ("wall_time", "server_peak_rss", "largest_rank_peak_rss", "payloads_copied_once",
                "payload_copy_fallbacks", "host_decisions", "host_load")
RANK_HOST_FIGURES = ("pid", "peak_rss", "host_decisions", "involuntary_switches")
DECISIONS = (("memory_waits", "memory waits"), ("blocked_outside", "blocked outside"),
             ("lockstep_idles", "lockstep idles"))


def load(path):
    """The summary at `path`, or None if it is missing or not JSON."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def simulated_part(summary):
    """A copy of `summary` without the host's figures (process ids in the message too): what
    two zero-model runs of a program must share. None stays None."""
    if summary is None:
        return None
    part = {k: v for k, v in summary.items() if k not in HOST_FIGURES}
    if isinstance(part.get("message"), str):
        part["message"] = re.sub(r"\(pid \d+", "(pid N", part["message"])
    if isinstance(part.get("ranks"), list):
        part["ranks"] = [{k: v for k, v in r.items() if k not in RANK_HOST_FIGURES} if isinstance(r, dict) else r
                         for r in part["ranks"]]
    return part


def differences(first, second, prefix=""):
    """The fields of two summaries (or parts) that differ, as 'path: a != b' lines."""
    if isinstance(first, dict) and isinstance(second, dict):
        return [line for k in sorted(set(first) | set(second))
                for line in differences(first.get(k), second.get(k), f"{prefix}{k}.")]
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [line for i, (a, b) in enumerate(zip(first, second)) for line in differences(a, b, f"{prefix}{i}.")]
    return [] if first == second else [f"{prefix.rstrip('.')}: {first!r} != {second!r}"]


def host_decisions(summary):
    """The server's decisions from the host in a summary, for a report: 'memory waits 2,
    blocked outside 0, lockstep idles 5 (rank 1: memory waits 2, lockstep idles 5)'."""
    if not isinstance(summary, dict) or not isinstance(summary.get("host_decisions"), dict):
        return "no host decisions recorded"

    def line(decisions, skip_zero):
        return ", ".join(f"{label} {decisions.get(key, 0)}" for key, label in DECISIONS
                         if not skip_zero or decisions.get(key, 0))

    ranks = [f"rank {r.get('rank')}: {line(r['host_decisions'], True)}" for r in summary.get("ranks", [])
             if isinstance(r, dict) and isinstance(r.get("host_decisions"), dict) and line(r["host_decisions"], True)]
    return line(summary["host_decisions"], False) + (f" ({'; '.join(ranks)})" if ranks else "")


def why_runs_differ(first, second, most=8, separator="; "):
    """What differs between two whole summaries (at most `most` fields, all with None), with
    the host decisions of each run, the parts joined by `separator`."""
    changed = differences(simulated_part(first), simulated_part(second))
    left_out = len(changed) - most if most is not None and len(changed) > most else 0
    shown = separator.join(changed[:len(changed) - left_out]) + (f"{separator}and {left_out} more" if left_out else "")
    return (f"{shown or 'nothing simulated differs'}{separator}host decisions: {host_decisions(first)} / "
            f"{host_decisions(second)}")
