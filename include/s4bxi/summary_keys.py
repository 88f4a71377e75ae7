#!/usr/bin/env python3
"""Writes s4bxi/summary_keys.hpp from summary_schema.json: the schema's version and one
constant per key name, so that the C++ that writes and reads run summaries spells every key
as the schema does (a key missing from the schema does not compile).

usage: summary_keys.py SCHEMA_JSON OUTPUT_HPP"""
import json
import sys


def key_names(fields, names):
    for name, spec in fields.items():
        names.add(name)
        if "fields" in spec:
            key_names(spec["fields"], names)
        items = spec.get("items", {})
        if "fields" in items:
            key_names(items["fields"], names)
    return names


def main():
    schema = json.load(open(sys.argv[1]))
    names = sorted(key_names(schema["fields"], set()))
    lines = ["// Generated from include/s4bxi/summary_schema.json by summary_keys.py: do not edit.",
             "#pragma once", "", "namespace s4bxi::summary {", "",
             f"inline constexpr int kVersion = {int(schema['version'])};", "", "namespace key {"]
    lines += [f'inline constexpr const char* {name} = "{name}";' for name in names]
    lines += ["}  // namespace key", "", "}  // namespace s4bxi::summary", ""]
    with open(sys.argv[2], "w") as out:
        out.write("\n".join(lines))


if __name__ == "__main__":
    main()
