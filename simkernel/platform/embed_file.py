#!/usr/bin/env python3
"""Turns a text file into a C++ source defining `extern const char NAME[]` with its content."""
import sys

source, output, name = sys.argv[1:4]
with open(source, encoding="utf-8") as f:
    text = f.read()
with open(output, "w", encoding="utf-8") as f:
    f.write("// Generated from %s; do not edit.\n" % source.split("/")[-1])
    f.write("namespace s4bxi::sim {\nextern const char %s[] = R\"s4bxi_embed(%s)s4bxi_embed\";\n}\n" % (name, text))
