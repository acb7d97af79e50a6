#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-tool: the tool on a big profile, against plain Python.

Generates two folded profiles of about 50 MB each (130,000 lines, stacks
1 to 40 frames deep, 20,000 function names, process names and [pid N]
keys, a fixed seed), then times hotstack report, its SVG and pprof
conversions and diff (report and SVG), and count_folded.py, a plain
python3 script doing report's counting. Prints each one's median wall
time of a few runs, its peak memory (the child's maximum resident set
size, from wait4()), the ratio of Python's time to the tool's and of the
memory to the file's size. It prints figures; it never fails on them
(only when a command fails).

usage: tool_bench.py HOTSTACK [DIR] [RUNS]
"""
import os
import random
import statistics
import subprocess
import sys
import time

LINES = 130000
MAX_DEPTH = 40
FUNCTIONS = 20000


def generate(path, seed):
    """A folded profile that looks like a kernel's: shared roots, hot frames."""
    r = random.Random(seed)
    syl = ["read", "write", "vfs", "ext4", "do", "sys", "page", "fault", "alloc",
           "free", "lock", "mutex", "sched", "tick", "irq", "net", "tcp", "ip", "skb",
           "copy", "user", "file", "inode", "dentry", "mm", "pte", "folio", "bio",
           "blk", "io"]
    funcs = []
    for i in range(FUNCTIONS):
        n = "_".join(r.choice(syl) for _ in range(r.randint(2, 4)))
        if r.random() < 0.5:
            n += "_%d" % i
        if r.random() < 0.1:
            n += " [%s]" % r.choice(["ext4", "xfs", "nf_tables", "kvm"])
        funcs.append(n)
    comms = ["bash", "cp", "find", "python3", "kworker/0:1", "sshd"]
    roots = [[r.choice(funcs) for _ in range(8)] for _ in range(200)]
    with open(path, "w") as f:
        for _ in range(LINES):
            depth = r.randint(1, MAX_DEPTH)
            frames = r.choice(roots)[:min(depth, r.randint(0, 8))]
            while len(frames) < depth:
                if r.random() < 0.7:
                    frames.append(funcs[int(r.paretovariate(1.2) * 50) % FUNCTIONS])
                else:
                    frames.append(r.choice(funcs))
            f.write("%s;[pid %d];%s %d\n" % (r.choice(comms), r.randint(1, 5000),
                                             ";".join(frames), r.randint(1, 500)))


def run(argv, out):
    """Wall seconds and peak RSS (KiB) of one run of argv, stdout to out."""
    with open(out, "wb") as o:
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=o)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit("tool_bench: %s failed (status %d)" % (" ".join(argv), p.returncode))
    return wall, usage.ru_maxrss


def measure(argv, out, runs):
    walls, rss = [], 0
    for _ in range(runs):
        wall, peak = run(argv, out)
        walls.append(wall)
        rss = max(rss, peak)
    return statistics.median(walls), rss


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tool = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    d = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TMPDIR", "/tmp") + "/hs_tool_bench"
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.makedirs(d, exist_ok=True)
    a, b = os.path.join(d, "a.folded"), os.path.join(d, "b.folded")
    for path, seed in ((a, 1), (b, 2)):
        if not os.path.exists(path):
            generate(path, seed)
    size = os.path.getsize(a)
    with open(a, "rb") as f:
        lines = sum(1 for _ in f)
    print("tool_bench: a.folded, %.1f MB, %d lines, stacks 1-%d frames (in %s); median of "
          "%d runs; load average %.2f" % (size / 1e6, lines, MAX_DEPTH, d, runs,
                                          os.getloadavg()[0]))

    py_wall, py_rss = measure([sys.executable, os.path.join(here, "count_folded.py"), a],
                              os.path.join(d, "py.txt"), runs)
    cases = [
        ("hotstack report", [tool, "report", a], "report.txt", size),
        ("report -o x.svg", [tool, "report", a, "-o", os.path.join(d, "x.svg")], "o.txt", size),
        ("report -o x.pb.gz", [tool, "report", a, "-o", os.path.join(d, "x.pb.gz")], "o.txt",
         size),
        ("diff A B", [tool, "diff", a, b], "diff.txt", size + os.path.getsize(b)),
        ("diff A B -o d.svg", [tool, "diff", a, b, "-o", os.path.join(d, "d.svg")], "o.txt",
         size + os.path.getsize(b)),
    ]
    print("%-22s %9s %10s %12s %14s" % ("", "wall s", "peak MB", "python/tool", "peak/input"))
    print("%-22s %9.3f %10.1f %12s %14.2f" % ("python3 count_folded", py_wall, py_rss / 1024,
                                              "1.00", py_rss * 1024 / size))
    for name, argv, out, insize in cases:
        wall, rss = measure(argv, os.path.join(d, out), runs)
        print("%-22s %9.3f %10.1f %12.2f %14.2f" % (name, wall, rss / 1024, py_wall / wall,
                                                    rss * 1024 / insize))
    print("(python/tool: how many times faster than the Python script; peak/input: peak "
          "memory over the size of the profiles read)")


if __name__ == "__main__":
    main()
