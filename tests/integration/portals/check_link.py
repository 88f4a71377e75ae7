#!/usr/bin/env python3
"""A Portals program compiled against include/portals4.h alone links with -lportals
(the library's development symlink and its SONAME libportals.so.4)."""
import os
import subprocess
import sys
import tempfile

include_dir, library, source = sys.argv[1:4]
library_dir = os.path.dirname(library)
with tempfile.TemporaryDirectory() as tmp:
    binary = os.path.join(tmp, "pingpong")
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", include_dir, source, "-o", binary,
                    "-L", library_dir, "-lportals"], check=True)
    needed = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    if "libportals.so.4" not in needed:
        sys.exit("the program does not depend on libportals.so.4:\n" + needed)
print("linked with -lportals; NEEDED libportals.so.4")
