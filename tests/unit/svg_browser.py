#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The SVG flame graph in a real browser: Debian's chromium, headless.

The tool writes flame graphs of known profiles: a small one, the
differential graph of two small ones (hotstack diff A B -o d.svg), a
50 MB profile from tests/bench's generator (the one make bench-tool
times) and the same profile without its process and pid keys (its
graph has more frames). svg_browser.html loads each SVG in an iframe,
searches (Ctrl-F, the Search button, search()), clicks frames to zoom
and "Reset zoom" where they are drawn, and writes what the document then
holds; chromium --dump-dom prints it. This script checks that against
what the profiles say: the "Matched: P%" share of the samples, the frames
highlighted, the zoomed frame at full width and its callees scaled, the
others hidden, the layout back after Reset zoom, a bad regular expression
said on the page and nothing thrown, and no network. TAP lines; exit 1
on any failure.

usage: svg_browser.py [small|big]   (default both: small, the unit step of
make check, takes seconds; big, its own step, the 50 MB profile)
"""
import hashlib
import html
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "userspace", "hotstack")
WIDTH = 1200            # fmt_svg.c's HS_SVG_WIDTH
HIGHLIGHT = "rgb(230,0,230)"
EPS = 0.01              # px: the SVG writes positions to 1/100 px

sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import tool_bench  # noqa: E402  (the generator of make bench-tool)

passed = failed = 0


def check(cond, name, diag=None):
    global passed, failed
    if cond:
        passed += 1
        print("ok - svg in chromium: %s" % name)
    else:
        failed += 1
        print("not ok - svg in chromium: %s" % name)
        for line in str(diag or "").splitlines()[:20]:
            print("# " + line)
    sys.stdout.flush()
    return cond


# ---- the profiles and what they say --------------------------------------

SMALL = """\
bash;main;read;vfs_read 10
bash;main;read;ext4_file_read_iter [ext4] 30
bash;main;write;vfs_write 20
swapper;cpu_idle 20
"""

# A for the differential graph: B is SMALL.
SMALL_A = """\
bash;main;read;vfs_read 30
bash;main;write;vfs_write 10
swapper;cpu_idle 40
"""


def parse_folded(text):
    """[(frames, count)] of a small folded profile."""
    lines = []
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        lines.append((stack.split(";"), int(count)))
    return lines


def tree(lines):
    """{(level, name): samples} with the root "all" at level 0; names are unique a level."""
    t = {}
    for frames, count in lines:
        for level, name in enumerate(["all"] + frames):
            t[(level, name)] = t.get((level, name), 0) + count
    return t


def line_share(lines, regex):
    """Percent of the samples whose stack has a frame (or the root) matching."""
    rx = re.compile(regex)
    total = sum(c for _, c in lines)
    hit = sum(c for frames, c in lines if any(rx.search(f) for f in ["all"] + frames))
    return 100.0 * hit / total


def drawn_share(frames, regex):
    """Percent of the width the drawn frames matching cover (nested ones once)."""
    rx = re.compile(regex)
    spans = sorted(((f["dx"], f["dw"]) for f in frames if rx.search(f["name"])),
                   key=lambda s: (s[0], -s[1]))
    covered, end = 0.0, -1.0
    for x, w in spans:
        if x >= end - 1e-4:
            covered += w
            end = x + w
    return 100.0 * covered / WIDTH


def shown_pct(text):
    m = re.fullmatch(r"Matched: (\d+(?:\.\d)?)%", text or "")
    return float(m.group(1)) if m else None


def big_profiles(d):
    """The 50 MB profile of make bench-tool's generator, and it without keys.

    Kept in $TMPDIR/hs_svg_browser under a name with the generator's hash, written
    under a temporary name first, so a run cut short (or two at once) leaves no
    half file.
    """
    src = inspect.getsource(tool_bench.generate).encode()
    tag = hashlib.sha256(src + str(tool_bench.LINES).encode()).hexdigest()[:12]
    a = os.path.join(d, "big-%s.folded" % tag)
    nokeys = os.path.join(d, "big-%s-nokeys.folded" % tag)
    tmp = ".%d.tmp" % os.getpid()
    if not os.path.exists(a):
        tool_bench.generate(a + tmp, 1)
        os.rename(a + tmp, a)
    if not os.path.exists(nokeys):
        with open(a) as i, open(nokeys + tmp, "w") as o:
            for line in i:
                o.write(re.sub(r"^[^;]*;\[pid \d+\];", "", line))
        os.rename(nokeys + tmp, nokeys)
    return a, nokeys


def big_facts(path, comm_regex):
    """Total samples, the share of the lines whose process matches, the widest first frame."""
    rx = re.compile(comm_regex)
    total = hit = 0
    first = {}
    with open(path) as f:
        for line in f:
            stack, count = line.rsplit(" ", 1)
            count = int(count)
            name = stack.split(";", 1)[0]
            total += count
            first[name] = first.get(name, 0) + count
            if rx.search(name):
                hit += count
    return total, 100.0 * hit / total, max(first, key=first.get)


# ---- the browser --------------------------------------------------------

def run_chromium(browser, work, cases, log):
    """The results svg_browser.html wrote for @cases, or None (and why, in @log)."""
    url = "file://%s/svg_browser.html?%s" % (urllib.parse.quote(work),
                                            urllib.parse.urlencode({"cases": json.dumps(cases)}))
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu",
            "--allow-file-access-from-files", "--user-data-dir=" + os.path.join(work, "profile"),
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,1000",
            "--dump-dom", url]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    except subprocess.TimeoutExpired:
        log.append("chromium took more than 300 s")
        return None
    m = re.search(r'<pre id="results">(.*?)</pre>', p.stdout.decode("utf-8", "replace"), re.S)
    if p.returncode or not m or not m.group(1):
        log.append("chromium exited %d; its standard error ends:" % p.returncode)
        log.extend(p.stderr.decode("utf-8", "replace").splitlines()[-15:])
        return None
    return {r["id"]: r for r in json.loads(html.unescape(m.group(1)))}


# ---- the checks ---------------------------------------------------------

def check_loaded(cid, r):
    check(r is not None and not r.get("exception"), "%s: the page ran its steps" % cid,
          r and r.get("exception"))
    if r is None or r.get("exception"):
        return False
    check(r["root"] == "svg" and r["api"] == "function,function,function",
          "%s: an SVG document with its script (search, zoom, reset)" % cid, r["api"])
    check(r["resources"] == [], "%s: self-contained, it loaded nothing" % cid, r["resources"])
    check(r["errors"] == [], "%s: no script error" % cid, r["errors"])
    return True


def check_search(cid, r, k, regex, how, want_pct=None):
    """Step @k searched @regex: its share, its highlighted frames, the way it was asked."""
    s = r["steps"][k]
    st = s["state"]
    rx = re.compile(regex)
    got = shown_pct(st["matched"])
    drawn = drawn_share(r["initial"]["frames"], regex)
    want = want_pct if want_pct is not None else drawn
    # "Matched: 100%" as flamegraph.pl writes it, else one decimal.
    ok = got is not None and abs(got - want) <= 0.05 + 1e-9 and \
        (st["matched"] == "Matched: 100%") == (want == 100.0)
    check(ok, "%s: search '%s' (%s) shows 'Matched: %.1f%%'" % (cid, regex, how, want),
          "the page shows %r; thrown: %s" % (st["matched"], s.get("exception")))
    if want_pct is not None:
        # The profile's share, against the frames as drawn (before the script).
        check(abs(drawn - want) <= 0.05, "%s: search '%s': the matched frames drawn cover "
              "%.1f%% of the width" % (cid, regex, want), "they cover %.3f%%" % drawn)
    wrong = [f["name"] for f in st["frames"]
             if (f["fill"] == HIGHLIGHT) != bool(rx.search(f["name"]))]
    check(not wrong and any(f["fill"] == HIGHLIGHT for f in st["frames"]),
          "%s: search '%s' highlights the frames that match, and only those" % (cid, regex),
          "wrongly coloured: %s" % wrong[:10])
    if how == "ctrlf":
        check(s["asked"] == 1 and s["prevented"], "%s: Ctrl-F asks for the expression "
              "(the browser's own find kept out)" % cid,
              "asked %d times; default prevented: %s" % (s["asked"], s.get("prevented")))
    elif how == "button":
        check(s["asked"] == 1 and s["hit"] == "text Search",
              "%s: a click where 'Search' is drawn asks for the expression" % cid,
              "the click hit: %s; asked %d times" % (s["hit"], s["asked"]))


def check_bad_and_clear(cid, r, k_bad, k_clear):
    s = r["steps"][k_bad]["state"]
    thrown = r["steps"][k_bad].get("exception")
    check(s["matched"] == "Bad regular expression: " + r["steps"][k_bad]["step"]["re"] and
          not any(f["fill"] == HIGHLIGHT for f in s["frames"]) and not r["errors"] and
          not thrown, "%s: a bad regular expression is said on the page, not thrown" % cid,
          "the page shows %r; thrown: %s; errors: %s" % (s["matched"], thrown, r["errors"]))
    s = r["steps"][k_clear]["state"]
    fills = [f["fill"] for f in s["frames"]] == [f["fill"] for f in r["initial"]["frames"]]
    check(s["matched"] == "" and fills, "%s: an empty search clears the highlight and "
          "the share" % cid, "the page shows %r" % s["matched"])


def zoom_expect(frames, target):
    """Each frame's (shown, x, w) after a zoom into @target, from the layout's geometry."""
    zx, zw, zl = target["dx"], target["dw"], target["l"]
    out = []
    for f in frames:
        x, w, l = f["dx"], f["dw"], f["l"]
        if l >= zl and x >= zx - 1e-4 and x + w <= zx + zw + 1e-4:
            out.append((True, (x - zx) * WIDTH / zw, w * WIDTH / zw))
        elif l < zl and x <= zx + 1e-4 and x + w >= zx + zw - 1e-4:
            out.append((True, 0.0, float(WIDTH)))
        else:
            out.append((False, None, None))
    return out


def check_zoom(cid, r, k, name, level, want_widths=None):
    """Step @k clicked frame @name: it spans the width, callees scaled, the rest hidden."""
    s = r["steps"][k]
    frames = s["state"]["frames"]
    check(s["hit"] == "frame " + name, "%s: a click in the middle of frame '%s' hits it"
          % (cid, name), "the click hit: %s" % s["hit"])
    zi = [i for i, f in enumerate(frames) if f["name"] == name and f["l"] == level]
    z = frames[zi[0]] if zi else None
    check(z is not None and z["shown"] and abs(z["x"]) < EPS and abs(z["w"] - WIDTH) < EPS,
          "%s: frame '%s' zoomed to the full width (x 0, width %d)" % (cid, name, WIDTH), z)
    if z is None:
        return
    bad = []
    for f, (shown, x, w) in zip(frames, zoom_expect(r["initial"]["frames"], z)):
        if f["shown"] != shown or (shown and (abs(f["x"] - x) > EPS or abs(f["w"] - w) > EPS)):
            bad.append("%s (level %d): shown %s x %s width %s, want %s %s %s" %
                       (f["name"], f["l"], f["shown"], f["x"], f["w"], shown, x, w))
    check(not bad, "%s: after the zoom into '%s' its callers span the width, its callees "
          "are scaled by %.2f, the others are hidden" % (cid, name, WIDTH / z["dw"]),
          "\n".join(bad[:10]))
    if want_widths is not None:
        got = {(f["l"], f["name"]): round(f["w"], 2) if f["shown"] else None for f in frames}
        check(got == want_widths, "%s: zoomed into '%s', the frames' widths are their "
              "samples over its samples" % (cid, name), "got %s\nwant %s" % (got, want_widths))
    label = z["label"]
    check(label == name, "%s: the zoomed frame's label is its whole name" % cid,
          "label %r" % label)


def check_reset(cid, r, k):
    s = r["steps"][k]
    bad = ["%s: x %s width %s shown %s label %r" % (f["name"], f["x"], f["w"], f["shown"],
                                                    f["label"])
           for f, i in zip(s["state"]["frames"], r["initial"]["frames"])
           if not f["shown"] or abs(f["x"] - i["x"]) > EPS or abs(f["w"] - i["w"]) > EPS or
           f["label"] != i["label"]]
    check(s["hit"] == "text Reset zoom" and not bad, "%s: a click on 'Reset zoom' gives "
          "back the layout as drawn (every frame, its place, width and label)" % cid,
          "the click hit: %s\n%s" % (s["hit"], "\n".join(bad[:10])))


def check_small(cid, r, lines, lines_a=None):
    """The small profiles: titles, searches, zoom and reset against the folded text."""
    t = tree(lines)
    total = t[(0, "all")]
    if not check_loaded(cid, r):
        return
    frames = r["initial"]["frames"]
    # Hover: each frame's title gives its samples and share (and A's for a diff).
    want = {}
    ta = tree(lines_a) if lines_a else None
    for (level, name), n in t.items():
        if ta is None:
            want[(level, name)] = "%s (%d samples, %.2f%%)" % (name, n, 100.0 * n / total)
        else:
            na, total_a = ta.get((level, name), 0), ta[(0, "all")]
            want[(level, name)] = "%s (B: %d samples, %.2f%%; A: %d samples, %.2f%%; " \
                "%+.2f pp)" % (name, n, 100.0 * n / total, na, 100.0 * na / total_a,
                               100.0 * n / total - 100.0 * na / total_a)
    got = {(f["l"], f["name"]): f["title"] for f in frames}
    check(got == want, "%s: every frame of the profile drawn, its title its samples and "
          "share" % cid, "got %s\nwant %s" % (got, want))
    steps = [s["step"] for s in r["steps"]]
    for k, st in enumerate(steps):
        if st["do"] == "search" and st["re"] and st["re"] != "(":
            check_search(cid, r, k, st["re"], st["how"], line_share(lines, st["re"]))
    k_bad = steps.index({"do": "search", "how": "call", "re": "("})
    check_bad_and_clear(cid, r, k_bad, k_bad + 1)
    # Zoom into read: a frame's width is its samples over read's; callers full, others hidden.
    for k, st in enumerate(steps):
        if st["do"] != "zoom":
            continue
        zn = t[(st["level"], st["name"])]
        path = next(["all"] + f for f, _ in lines
                    if len(f) >= st["level"] and f[st["level"] - 1] == st["name"])
        want_w = {}
        for (level, name), n in t.items():
            if level < st["level"] and path[level] == name:
                want_w[(level, name)] = float(WIDTH)
            elif level >= st["level"] and any(
                    len(f) >= level and f[st["level"] - 1] == st["name"] and
                    f[level - 1] == name for f, _ in lines):
                want_w[(level, name)] = round(WIDTH * n / zn, 2)
            else:
                want_w[(level, name)] = None
        check_zoom(cid, r, k, st["name"], st["level"], want_w)
        if k + 1 < len(steps) and steps[k + 1]["do"] == "search":
            check(shown_pct(r["steps"][k + 1]["state"]["matched"]) ==
                  round(line_share(lines, steps[k + 1]["re"]), 1),
                  "%s: a search while zoomed gives the share of all the samples" % cid)
    for k, st in enumerate(steps):
        if st["do"] == "reset":
            check_reset(cid, r, k)


SMALL_STEPS = [
    {"do": "search", "how": "call", "re": "vfs_read"},
    {"do": "search", "how": "ctrlf", "re": "^(main|vfs_read)$"},
    {"do": "search", "how": "button", "re": "\\[ext4\\]|idle"},
    {"do": "search", "how": "call", "re": "vfs_"},
    {"do": "search", "how": "call", "re": "."},
    {"do": "search", "how": "call", "re": "("},
    {"do": "search", "how": "call", "re": ""},
    {"do": "zoom", "name": "read", "level": 3},
    {"do": "search", "how": "call", "re": "vfs_read"},
    {"do": "reset"},
    {"do": "zoom", "name": "bash", "level": 1},
    {"do": "reset"},
]


def big_steps(first_regex, widest):
    return [
        {"do": "search", "how": "ctrlf", "re": first_regex},
        {"do": "search", "how": "button", "re": "^" + re.escape(widest) + "$"},
        {"do": "search", "how": "call", "re": "("},
        {"do": "search", "how": "call", "re": ""},
        {"do": "zoom", "name": widest, "level": 1},
        {"do": "reset"},
    ]


def check_big(cid, r, size, comm_regex=None, comm_pct=None):
    if not check_loaded(cid, r):
        return
    frames = r["initial"]["frames"]
    check(len(frames) > 100, "%s: a %.0f MB profile drawn in %d frames" %
          (cid, size / 1e6, len(frames)), len(frames))
    steps = [s["step"] for s in r["steps"]]
    for k, st in enumerate(steps):
        if st["do"] == "search" and st["re"] and st["re"] != "(":
            # The share of the samples where the profile says so (the processes,
            # all drawn), else of the frames drawn (those under 0.1 px are not).
            check_search(cid, r, k, st["re"], st["how"],
                         comm_pct if st["re"] == comm_regex else None)
        elif st["do"] == "zoom":
            check_zoom(cid, r, k, st["name"], st["level"])
        elif st["do"] == "reset":
            check_reset(cid, r, k)
    check_bad_and_clear(cid, r, 2, 3)


def tool(*args):
    p = subprocess.run([TOOL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        sys.exit("svg_browser: hotstack %s failed: %s" % (" ".join(args), p.stdout.decode()))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    if which not in ("small", "big", "both"):
        sys.exit(__doc__)
    browser = shutil.which("chromium")
    if not check(browser is not None, "chromium is installed (tests/deps.sh installs it)") or \
            not check(os.access(TOOL, os.X_OK), "the tool is built (userspace/hotstack)"):
        print("1..%d" % (passed + failed))
        return 1
    work = tempfile.mkdtemp(prefix="hs_svg_browser_")
    try:
        shutil.copy(os.path.join(HERE, "svg_browser.html"), work)
        for name, text in (("p.folded", SMALL), ("a.folded", SMALL_A)):
            with open(os.path.join(work, name), "w") as f:
                f.write(text)
        tool("report", os.path.join(work, "p.folded"), "-o", os.path.join(work, "p.svg"))
        tool("diff", os.path.join(work, "a.folded"), os.path.join(work, "p.folded"),
             "-o", os.path.join(work, "d.svg"))
        cases = [{"id": "profile", "svg": "p.svg", "steps": SMALL_STEPS},
                 {"id": "diff", "svg": "d.svg", "steps": SMALL_STEPS}]
        if which != "big":
            start = time.time()
            log = []
            res = run_chromium(browser, work, cases, log)
            check(res is not None, "chromium loaded the small graphs and wrote the results "
                  "(%.1f s)" % (time.time() - start), "\n".join(log))
            res = res or {}
            check_small("profile", res.get("profile"), parse_folded(SMALL))
            check_small("diff", res.get("diff"), parse_folded(SMALL), parse_folded(SMALL_A))
        if which != "small":
            cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hs_svg_browser")
            os.makedirs(cache, exist_ok=True)
            start = time.time()
            a, nokeys = big_profiles(cache)
            comm = "^(bash|cp)$"
            size = os.path.getsize(a)
            _, comm_pct, widest = big_facts(a, comm)
            _, _, widest_nokeys = big_facts(nokeys, comm)
            tool("report", a, "-o", os.path.join(work, "big.svg"))
            tool("report", nokeys, "-o", os.path.join(work, "nokeys.svg"))
            prep = time.time() - start
            cases = [{"id": "50 MB profile", "svg": "big.svg", "steps": big_steps(comm, widest)},
                     {"id": "50 MB profile without keys", "svg": "nokeys.svg",
                      "steps": big_steps("^vfs_|_fault", widest_nokeys)}]
            start = time.time()
            log = []
            res = run_chromium(browser, work, cases, log)
            check(res is not None, "chromium loaded the graphs of the 50 MB profile "
                  "(%.1f s; profiles and SVGs %.1f s)" % (time.time() - start, prep),
                  "\n".join(log))
            res = res or {}
            check_big("50 MB profile", res.get("50 MB profile"), size, comm, comm_pct)
            check_big("50 MB profile without keys", res.get("50 MB profile without keys"),
                      os.path.getsize(nokeys))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("1..%d" % (passed + failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
