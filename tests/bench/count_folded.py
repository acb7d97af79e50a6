#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The counting hotstack report does, as a plain Python script: the
baseline of make bench-tool. Reads a folded profile ("frame;...;frame
COUNT" lines), sums the samples, and prints the 20 hottest functions by
self (the leaf) and by total (on the stack, once a stack). Markers
("[...]") are not functions, nor a process name followed by "[pid N]"."""
import sys


def main(path):
    self_, total = {}, {}
    samples = 0
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"#"):
                continue
            stack, _, count = line.rstrip(b"\r\n").rpartition(b" ")
            if not stack:
                continue
            count = int(count)
            samples += count
            frames = stack.split(b";")
            if len(frames) > 1 and frames[1].startswith(b"[pid "):
                frames = frames[1:]
            funcs = [fr for fr in frames if fr and not fr.startswith(b"[")]
            if not funcs:
                continue
            if funcs[-1] is frames[-1]:
                self_[funcs[-1]] = self_.get(funcs[-1], 0) + count
            for fn in set(funcs):
                total[fn] = total.get(fn, 0) + count
    print("# samples: %d" % samples)
    for title, d in (("by self", self_), ("by total", total)):
        print("\n# " + title)
        for fn, c in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:20]:
            print("  %6.2f%% %12d  %s" % (100.0 * c / samples, c, fn.decode(errors="replace")))


if __name__ == "__main__":
    main(sys.argv[1])
