#!/usr/bin/env python3
"""The house rules of the source tree (docs/architecture.md):
- a part (libinterpose/, simkernel/, launcher/, agent/) includes only its own files and the
  shared headers of include/ (s4bxi/..., portals4.h, pmi.h): never another part's private
  ones, but for the folders of another part it says it runs (USES: the agent runs the
  server's machine services on its machine);
- inside a part, a folder includes only the folders below it in the part's order (LAYERS;
  the part's top-level files count as one folder, "."): no cycle between folders;
- no source file is over 900 lines;
- every folder of a part, and include/, tests/, bench/, tools/, platforms/ and their
  folders, says what it holds in a README.md;
- no file names a Markdown document that the repository does not contain.

usage: check_layout.py SOURCE_ROOT"""
import re
import subprocess
import sys
from pathlib import Path

PARTS = ("libinterpose", "simkernel", "launcher", "agent")
# Folders outside the parts that say what they hold too, with every folder below them.
DOCUMENTED = ("include", "tests", "bench", "tools", "platforms")
# Files whose text is read for names of documents (*.md): the tree's own sources and docs.
TEXT_SUFFIXES = {".cpp", ".hpp", ".h", ".c", ".py", ".md", ".toml", ".build", ".txt", ""}
# A document's name: in capitals (README.md), or a path (docs/time.md) anywhere; a bare
# lower-case name (time.md) only in Markdown, where code's `a.md` member accesses are not.
DOCUMENT = re.compile(r"(?<![\w.>/-])([A-Z][A-Z0-9_-]*\.md|[\w.-]+(?:/[\w.-]+)+\.md)\b")
BARE_DOCUMENT = re.compile(r"(?<![\w.>/-])([a-z][\w-]*\.md)\b")
LIMIT = 900
# Each part's folders, bottom first: a file may include files of its own folder and of the
# folders before it.
LAYERS = {
    "libinterpose": ("rank", "delivery", "channel", "time", "threads", "identity", "outside", "crash", "portals",
                     "mpi", "shmem", "startup"),
    "simkernel": ("platform", "host", "channel", "run", "services", "registration", "portals", "nic", "calls",
                  "observation", "scheduling", "."),
    "launcher": ("calibrate", "."),
    "agent": (".",),
}
# Folders of another part that a part runs as they are, with their own layer rules: the
# agent of a machine runs the server's services for that machine's processes (host/, and
# services/ for the seccomp supervisor; agent/meson.build links simkernel_machine).
USES = {"agent": {"simkernel": ("host", "services")}}
# Headers generated at build time, and the source they come from.
GENERATED = {"s4bxi/summary_keys.hpp": "include/s4bxi/summary_schema.json"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked_files(root):
    """The files of the tree: git's list in a clone, else every file but a build's."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
        return [root / name for name in listed.stdout.decode().split("\0") if name and (root / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [path for path in root.rglob("*")
                if path.is_file() and not path.relative_to(root).parts[0].startswith(("build", ".git"))]


def missing_documents(root):
    """Names of Markdown documents that no file of the tree carries."""
    files = list(tracked_files(root))
    names = {path.name for path in files}
    problems = []
    for path in files:
        if path.suffix not in TEXT_SUFFIXES or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found = set(DOCUMENT.findall(text))
        if path.suffix == ".md":
            found |= set(BARE_DOCUMENT.findall(text))
        for name in sorted(found):
            name = name.rsplit("/", 1)[-1]
            if name not in names:
                problems.append(f"{path.relative_to(root)}: names {name}, which the repository does not contain")
    return problems


def folder_of(base, path):
    """The folder of the part that holds `path`: its first component, "." at the top."""
    parts = path.resolve().relative_to(base.resolve()).parts
    return parts[0] if len(parts) > 1 else "."


def check_layer(part, base, path, found, problems):
    """A file of `part` includes `found`: the including folder must be above the included one."""
    if not found.is_relative_to(base.resolve()):
        return
    here, there = folder_of(base, path), folder_of(base, found)
    if here == there:
        return
    order = LAYERS.get(part)
    if order is None:  # said once, in main()
        return
    for folder in (here, there):
        if folder not in order:
            problems.append(f"{path.relative_to(base.parent)}: folder {part}/{folder} has no place in the part's "
                            f"layer order (tests/layout/check_layout.py, LAYERS)")
            return
    if order.index(there) > order.index(here):
        problems.append(f"{path.relative_to(base.parent)}: {part}/{here} includes {found.relative_to(base.resolve().parent)}"
                        f", in {part}/{there}, a layer above it ({' < '.join(order)})")


def main():
    root = Path(sys.argv[1])
    problems = []
    for part in PARTS:
        base = root / part
        used = [(root / other, folders) for other, folders in USES.get(part, {}).items()]
        if part not in LAYERS:
            problems.append(f"{part}/ has no layer order (tests/layout/check_layout.py, LAYERS)")
        for path in sorted(base.rglob("*")):
            if path.is_dir():
                if path.name == "__pycache__":  # Python's byte code of an imported module
                    continue
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
                candidates = [path.parent / name, base / name, root / "include" / name,
                              *(other / name for other, folders in used if name.split("/")[0] in folders)]
                found = next((c.resolve() for c in candidates if c.exists()), None)
                if found is None and name in GENERATED and (root / GENERATED[name]).exists():
                    continue
                if found is None:
                    problems.append(f"{path.relative_to(root)}: includes \"{name}\", found nowhere")
                    continue
                check_layer(part, base, path, found, problems)
                allowed = (base.resolve(), (root / "include").resolve(),
                           *((other / folder).resolve() for other, folders in used for folder in folders))
                if not any(found.is_relative_to(a) for a in allowed):
                    problems.append(f"{path.relative_to(root)}: includes {found.relative_to(root.resolve())}, "
                                    f"private to another part")
        if not (base / "README.md").exists():
            problems.append(f"{part}/ has no README.md")
    for top in DOCUMENTED:
        for path in [root / top, *sorted((root / top).rglob("*"))]:
            if path.is_dir() and path.name != "__pycache__" and not (path / "README.md").exists():
                problems.append(f"{path.relative_to(root)}/ has no README.md")
    problems += missing_documents(root)
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"ok: {', '.join(PARTS)} include only their own files and include/; "
          f"{', '.join(LAYERS)} in layers; no file over {LIMIT} lines; "
          "every folder has its README; every document named exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
