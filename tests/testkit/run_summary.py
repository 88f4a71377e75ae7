"""Run summaries compared from run to run: what two runs of a program under --cpu-model zero
must share, what they may not (the host's figures), and the decisions the server took from
what the host showed, which say why two runs differ when they do (docs/usage.md, "The run
summary"). One list for every check that compares runs."""
import importlib.util
import json
import re
from pathlib import Path

# The summary's schema, which the C++ that writes it spells its keys from too
# (include/s4bxi/summary_keys.py).
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "include" / "s4bxi" / "summary_schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text())
_RANK_FIELDS = SCHEMA["fields"]["ranks"]["items"]["fields"]
# Figures of the host, not of the simulation (marked "host" in the schema): the whole
# run's, then each rank's.
HOST_FIGURES = tuple(name for name, spec in SCHEMA["fields"].items() if spec.get("host"))
RANK_HOST_FIGURES = tuple(name for name, spec in _RANK_FIELDS.items() if spec.get("host"))


def key_names():
    """Every key name of the schema, at any depth: the names summary_keys.hpp declares, by
    the walk of the schema that writes it at build time (include/s4bxi/summary_keys.py)."""
    spec = importlib.util.spec_from_file_location("summary_keys", SCHEMA_PATH.with_name("summary_keys.py"))
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    return generator.key_names(SCHEMA["fields"], set())


_TYPES = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
          "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list)}


def schema_problems(summary, fields=None, where="summary"):
    """What in `summary` the schema does not allow: a key it does not name, a key it requires
    that is missing, a value of another type. Empty when the summary follows it."""
    fields = SCHEMA["fields"] if fields is None else fields
    problems = [f"{where}: key {name!r} is not in {SCHEMA_PATH.name}" for name in summary if name not in fields]
    for name, spec in fields.items():
        if name not in summary:
            if not spec.get("optional"):
                problems.append(f"{where}: key {name!r} is missing")
            continue
        problems += _value_problems(summary[name], spec, f"{where}.{name}")
    return problems


def _value_problems(value, spec, where):
    if not _TYPES[spec["type"]](value):
        return [f"{where}: {type(value).__name__} {value!r:.40}, not {spec['type']}"]
    if spec["type"] == "object" and "fields" in spec:
        return schema_problems(value, spec["fields"], where)
    if spec["type"] == "array":
        return [p for i, item in enumerate(value) for p in _value_problems(item, spec["items"], f"{where}[{i}]")]
    return []
DECISIONS = (("memory_waits", "memory waits"), ("memory_waits_by_reads", "of them by plain reads"),
             ("blocked_outside", "blocked outside"),
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


def host_independent(path):
    """The summary at `path` without what depends on the host (simulated_part), or None if
    it is missing: what two zero-model runs of a program must share."""
    return simulated_part(load(path))


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
