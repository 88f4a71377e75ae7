#!/usr/bin/env python3
"""A timeline drawn by a real viewer (docs/observability.md): a 4-rank MPI_Allreduce loop
run with --timeline, opened in speedscope by headless Chromium, served from localhost.

- the slices of each track nest, in the file's decimals and in a viewer's binary
  arithmetic (a viewer pairs each slice's begin and end on a stack: a slice that ends a
  hair after its parent, or after the next slice began, is drawn as never ending);
- speedscope reads the file (the server sees it fetched) and names its track after a rank
  of the run (the page's text);
- the screenshot is not blank: the slices are drawn in several colours, over a sizeable part
  of the picture (speedscope's welcome page, shown when a file cannot be read, has one
  colour, its blue button, on about 2% of the picture).

speedscope comes from the npm registry, pinned, into a cache outside the clone
($XDG_CACHE_HOME or ~/.cache, s4bxi/speedscope-VERSION). The test is skipped, saying why,
when Chromium (Debian's chromium), npm or the registry is missing.

S4BXI_VIEWER_SCREENSHOT=FILE keeps the screenshot.

usage: check_viewer.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import colorsys
import decimal
import functools
import http.server
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
ROUNDS, COUNT = 20, 1024
SPEEDSCOPE = "1.25.0"
WIDTH, HEIGHT = 1000, 700
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=15000"]


def speedscope():
    """speedscope's page (index.html of its release), installed from npm if needed, and
    None with the reason when it cannot be."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "s4bxi" / f"speedscope-{SPEEDSCOPE}"
    page = cache / "node_modules" / "speedscope" / "dist" / "release" / "index.html"
    if page.exists():
        return page, None
    npm = shutil.which("npm")
    if not npm:
        return None, "npm is missing (Debian's npm): speedscope cannot be installed"
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=cache.name + ".", dir=cache.parent))
    try:
        result = subprocess.run([npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--ignore-scripts",
                                 f"speedscope@{SPEEDSCOPE}"], capture_output=True, text=True, timeout=300,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0 or not (staging / page.relative_to(cache)).exists():
            return None, f"npm could not install speedscope@{SPEEDSCOPE}: {result.stderr.strip()[-400:]}"
        staging.rename(cache)
        return page, None
    except subprocess.TimeoutExpired:
        return None, f"npm did not install speedscope@{SPEEDSCOPE} within 300 s (is the registry reachable?)"
    except OSError:  # another run installed it meanwhile
        return (page, None) if page.exists() else (None, f"speedscope could not be installed in {cache}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class Server:
    """A local HTTP server of `root` in a thread, which remembers the paths fetched."""

    def __init__(self, root):
        self.fetched = []
        fetched = self.fetched

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                fetched.append(self.path)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def chromium(chrome, work, url, *what, timeout=120):
    """Runs headless Chromium on `url` with a fresh profile; returns (status, stdout, stderr),
    or raises RuntimeError when it takes longer than `timeout` seconds."""
    profile = tempfile.mkdtemp(prefix="profile.", dir=work)
    process = subprocess.Popen([chrome, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *what, url],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, cwd=work)
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RuntimeError(f"chromium {' '.join(what)} did not finish within {timeout} s (the page never settled)")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def png_pixels(path):
    """The RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG file (as Chromium writes
    them), row by row."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path.name} is not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path.name}: a PNG of depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    pixels = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up = previous[i]
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                corner = previous[i - channels] if i >= channels else 0
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        pixels.extend(bytes(row[i:i + 3]) for i in range(0, stride, channels))
        previous = row
    return pixels


def colour_figures(pixels):
    """(share of coloured pixels, hues holding at least 0.2% of the picture each): a pixel is
    coloured when its channels differ by more than 40; hues in twelve sectors."""
    sectors = [0] * 12
    coloured = 0
    for pixel in pixels:
        if max(pixel) - min(pixel) > 40:
            coloured += 1
            hue = colorsys.rgb_to_hsv(*(c / 255 for c in pixel))[0]
            sectors[int(hue * 12) % 12] += 1
    return coloured / len(pixels), sum(1 for n in sectors if n >= 0.002 * len(pixels))


def nesting_errors(text):
    """Where the slices of a track overlap without nesting, in exact decimal arithmetic and
    in the binary arithmetic of a viewer (each date less the track's first one, plus the
    duration)."""
    tracks = {}
    for e in json.loads(text, parse_float=decimal.Decimal)["traceEvents"]:
        if e["ph"] == "X":
            tracks.setdefault(e["tid"], []).append(e)
    errors = []
    for tid, slices in tracks.items():
        first = min(e["ts"] for e in slices)
        for arithmetic, spans in (
                ("decimal", [(e["ts"], e["ts"] + e["dur"], e["name"]) for e in slices]),
                ("binary", [(float(e["ts"]) - float(first), float(e["ts"]) - float(first) + float(e["dur"]), e["name"])
                            for e in slices])):
            spans.sort(key=lambda span: (span[0], -span[1]))
            stack = []
            for begin, end, name in spans:
                while stack and stack[-1][1] <= begin:
                    stack.pop()
                if stack and end > stack[-1][1]:
                    errors.append(f"track {tid} ({arithmetic}): {name} [{begin}, {end}] overlaps {stack[-1][2]} "
                                  f"[{stack[-1][0]}, {stack[-1][1]}] without nesting")
                stack.append((begin, end, name))
    return errors


def run(launcher, program, work):
    result = launch(launcher, program, ROUNDS, COUNT, ranks=4, mpirun=True, timeout=120,
                    options=("--timeline", "timeline.json"), wall_timeout=150, env=launch_environment(), cwd=work)
    print(f"$ {' '.join(result.args)}\nstatus {result.returncode}\n{result.stdout}", flush=True)
    return result


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_allreduce"
    skip = why_skip(argv, program, launcher)
    chrome = shutil.which("chromium")
    if not skip and not chrome:
        skip = "chromium is missing (Debian's chromium; tools/setup installs it when it can)"
    page = None
    if not skip:
        page, skip = speedscope()
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    errors = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        result = run(launcher, program, work)
        if result.returncode != 0:
            return verdict([f"exit status {result.returncode}: {result.stderr[-1500:]}"], program.name, "")
        text = (work / "timeline.json").read_text()
        slices = sum(1 for e in json.loads(text)["traceEvents"] if e["ph"] == "X")
        overlaps = nesting_errors(text)
        if overlaps:
            errors.append(f"{len(overlaps)} slices do not nest, e.g. {overlaps[0]}")
        site = work / "site"
        shutil.copytree(page.parent, site)
        shutil.copy(work / "timeline.json", site / "timeline.json")
        server = Server(site)
        url = f"{server.url}/index.html#profileURL={server.url}/timeline.json"
        try:
            status, dom, err = chromium(chrome, work, url, "--dump-dom")
            if status != 0:
                errors.append(f"chromium --dump-dom: status {status}: {err[-800:]}")
            names = sorted(set(re.findall(r"rank \d+ \(node\d+\)", dom)))
            print(f"speedscope shows the tracks {names}")
            if not names:
                errors.append("speedscope's page names no track of the run (the timeline was not read)")
            status, _, err = chromium(chrome, work, url, "--screenshot=" + str(work / "speedscope.png"))
            picture = work / "speedscope.png"
            if status != 0 or not picture.exists():
                errors.append(f"chromium --screenshot: status {status}, no picture: {err[-800:]}")
            else:
                share, hues = colour_figures(png_pixels(picture))
                print(f"{slices} slices in the timeline; the screenshot: {share:.1%} coloured pixels, {hues} hues")
                if share < 0.04 or hues < 2:
                    errors.append(f"the screenshot looks blank: {share:.1%} coloured pixels in {hues} hues "
                                  "(the slices would give 4% or more, in two hues or more)")
                keep = os.environ.get("S4BXI_VIEWER_SCREENSHOT")
                if keep:
                    shutil.copy(picture, keep)
        except RuntimeError as timeout:
            errors.append(str(timeout))
        finally:
            server.close()
        if not any(path.startswith("/timeline.json") for path in server.fetched):
            errors.append(f"speedscope never fetched the timeline (requests: {server.fetched[:10]})")
    return verdict(errors, program.name, "speedscope draws the timeline of a 4-rank run")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
