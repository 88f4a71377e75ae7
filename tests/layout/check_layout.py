#!/usr/bin/env python3
"""The house rules of the source tree (docs/architecture.md):
- a part (libinterpose/, simkernel/, launcher/) includes only its own files and the shared
  headers of include/ (s4bxi/..., portals4.h, pmi.h): never another part's private ones;
- no source file is over 900 lines;
- every folder of a part says what it holds in a README.md.

usage: check_layout.py SOURCE_ROOT"""
import re
import sys
from pathlib import Path

PARTS = ("libinterpose", "simkernel", "launcher")
LIMIT = 900
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = Path(sys.argv[1])
    problems = []
    for part in PARTS:
        base = root / part
        for path in sorted(base.rglob("*")):
            if path.is_dir():
                if not (path / "README.md").exists():
                    problems.append(f"{path.relative_to(root)}/ has no README.md")
                continue
            if path.suffix not in (".cpp", ".hpp", ".h", ".c"):
                continue
            text = path.read_text()
            lines = text.count("\n")
            if lines > LIMIT:
                problems.append(f"{path.relative_to(root)}: {lines} lines (at most {LIMIT})")
            for name in INCLUDE.findall(text):
                candidates = [path.parent / name, base / name, root / "include" / name]
                found = next((c.resolve() for c in candidates if c.exists()), None)
                if found is None:
                    problems.append(f"{path.relative_to(root)}: includes \"{name}\", found nowhere")
                    continue
                allowed = (base.resolve(), (root / "include").resolve())
                if not any(found.is_relative_to(a) for a in allowed):
                    problems.append(f"{path.relative_to(root)}: includes {found.relative_to(root.resolve())}, "
                                    f"private to another part")
        if not (base / "README.md").exists():
            problems.append(f"{part}/ has no README.md")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"ok: {', '.join(PARTS)} include only their own files and include/; no file over {LIMIT} lines; "
          "every folder has its README")
    return 0


if __name__ == "__main__":
    sys.exit(main())
