#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: sampling overhead in the deterministic VM (-icount shift=0,
# sleep=off, one CPU: guest time = guest instructions, 1 ns each). All
# samplers run the same syscall loop in one boot at 10 kHz cpu-clock; the
# cost of a sample is the extra time over the unprofiled run divided by the
# samples taken. perf record -a -g and a bpftrace kstack-counting script
# run the same loop in the same boot when the host has them (the bench
# installs linux-perf and bpftrace). Off-CPU time: hotstack record
# --off-cpu, bcc's offcputime and a bpftrace script of its method on a
# pipe ping-pong, in a second boot (tests/bench/offcpu.sh: from a Debian
# root, which bcc needs). Prints the tables and the ratios.
#
#   tests/bench/run.sh [--report LOG]   (--report: summarise a saved log)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}
mkdir -p "$out"
log=$out/bench.log
if [ "${1:-}" = --report ]; then
	log=$2		# only summarise an earlier run's log
else
	"$repo/tests/deps.sh" linux-perf bpftrace
	HOTSTACK_VM_BINS="$(command -v perf || true) $(command -v bpftrace || true)" \
	HOTSTACK_VM_TIMEOUT=${HOTSTACK_VM_TIMEOUT:-1800} \
		"$repo/tests/vm/run.sh" generic --icount --script "$repo/tests/bench/guest.sh" \
		>"$log" || { cat "$log"; exit 1; }
	# Off-CPU time in a boot of its own, from a Debian root: bcc is
	# Python and LLVM, and compiles its program against the guest
	# kernel's headers (the host's, for Debian's kernel it boots). The
	# root has what the tool links (ldd's libraries' packages).
	eval "$("$repo/tests/vm/kernel.sh" generic)"
	kver=${KDIR#/usr/src/linux-headers-}
	make -s -C "$repo/userspace"
	libs=$(for lib in $(ldd "$repo/userspace/hotstack" | grep -o '/[^ ]*'); do
		lib=$(readlink -f "$lib")
		dpkg -S "$lib" 2>/dev/null || dpkg -S "${lib#/usr}"
	done | sed 's/[:,].*//' | sort -u | paste -sd,)
	sysroot=$("$repo/tests/vm/sysroot.sh" "bpfcc-tools,bpftrace,$libs" \
		"$KDIR" "$(readlink -f "/lib/modules/$kver/source")" "/lib/modules/$kver")
	HOTSTACK_OUT=$out/bench-offcpu HOTSTACK_VM_SYSROOT=$sysroot HOTSTACK_VM_MEM=4096 \
	HOTSTACK_VM_TIMEOUT=${HOTSTACK_VM_TIMEOUT:-1800} \
		"$repo/tests/vm/run.sh" generic --icount --script "$repo/tests/bench/offcpu.sh" \
		>>"$log" || { cat "$log"; exit 1; }
fi
# verdict(R, GOAL, WHAT, WIDTH): a ratio's line, against its goal if it
# has one (a miss counted in missed).
verdict='
	function verdict(r, goal, what, width,    ok) {
		ok = ""
		if (goal != "")
			ok = sprintf(r <= goal ? "  (goal <= %.2fx)" : "  MISSED: goal <= %.2fx", goal)
		printf "  %-" width "s %7.3fx%s\n", what, r, ok
		if (goal != "" && r > goal)
			missed++
	}'
svg=$out/bench-curves.svg
sed -n 's/^RUN //p' "$log" | awk -v svg="$svg" "$verdict"'
	# RUN lines: WORK MODE HZ ELAPSED SAMPLES HANDLER [MAXBUCKET]
	$1 == "worst" {
		if ($2 == "spin") spin = $4
		else if ($2 == "spin-collide") cspin = $4
		else if ($2 == "collide") { ct = $4; cs = $5; cm = $7; ccoll = $8 }
		else { wt[$2] = $4; ws[$2] = $5; wm[$2] = $7 }
		next
	}
	$2 == "none" { if (!((1, $1) in base)) base[1, $1] = $4; else base[2, $1] = $4; next }
	{
		if (!($1 in seen)) { seen[$1] = 1; works[++nw] = $1 }
		k = $1 SUBSEP $2
		if (!(k in nr)) modes[$1, ++nm[$1]] = $2
		r = ++nr[k]
		rt[k, r] = $4; rs[k, r] = $5; rh[k, r] = $6
		rc[k, r] = $5 ? ($4 - base[1, $1]) / $5 : 0
	}
	# The run of a sampler whose cost is the median of its runs (one or three).
	function median(k,    i, j, below) {
		for (i = 1; i <= nr[k]; i++) {
			below = 0
			for (j = 1; j <= nr[k]; j++)
				if (rc[k, j] < rc[k, i] || (rc[k, j] == rc[k, i] && j < i))
					below++
			if (below == int((nr[k] - 1) / 2))
				return i
		}
	}
	function ratio(w, a, b, goal, what) {
		if ((w, a) in c && (w, b) in c && c[w, b] > 0)
			verdict(c[w, a] / c[w, b], goal, what, 44)
	}
	END {
		for (k in nr) {
			r = median(k)
			t[k] = rt[k, r]; s[k] = rs[k, r]; h[k] = rh[k, r]; c[k] = rc[k, r]
		}
		for (i = 1; i <= nw; i++) {
			w = works[i]
			if (w ~ /^deep:/)
				continue
			printf "\n%s: unprofiled %.1f ms and %.1f ms (two runs: the spread is the noise)\n",
				w, base[1, w] / 1e6, base[2, w] / 1e6
			printf "  %-14s %10s %9s %12s %14s %5s\n", "sampler", "time ms", "samples",
				"ns/sample", "handler ns/s.", "runs"
			# (of several runs, the one of median cost)
			for (j = 1; j <= nm[w]; j++) {
				m = modes[w, j]
				if (m == "record-budget")
					continue
				printf "  %-14s %10.1f %9d %12.0f %14s %5s\n", m, t[w, m] / 1e6, s[w, m],
					c[w, m], h[w, m] ? sprintf("%.0f", h[w, m] / s[w, m]) : "-",
					nr[w, m]
			}
			# The unwind floor over every phase of the loop: the jittered
			# walk less the cost of drawing the periods (hotstack pays for
			# its own draws).
			if ((w, "unwind-jitter") in c && (w, "empty-jitter") in c && (w, "empty") in c) {
				c[w, "floor"] = c[w, "unwind-jitter"] - (c[w, "empty-jitter"] - c[w, "empty"])
				printf "  the unwind floor: %.0f ns a sample (unwind-jitter less its draw, " \
					"%.0f ns; unwind, one exact period: %.0f)\n", c[w, "floor"],
					c[w, "empty-jitter"] - c[w, "empty"], c[w, "unwind"]
			} else if ((w, "unwind") in c) {
				# A log of before the jittered floor (--report).
				c[w, "floor"] = c[w, "unwind"]
				printf "  the unwind floor: unwind, one exact period\n"
			}
			ratio(w, "record", "floor", 1.05, "hotstack record / the unwind floor")
			ratio(w, "hotstack", "floor", 1.05, "bare session / the unwind floor")
			ratio(w, "record-ip", "empty", 1.15, "record --max-depth 1 / the empty floor")
			ratio(w, "record", "perf-k", "", "record / perf -g --kernel-callchains")
			ratio(w, "record", "bpftrace-k", "", "record / bpftrace kstack")
			ratio(w, "record-both", "perf-ku", 0.65, "record --stacks both / perf -g")
			ratio(w, "record-ip", "perf-ip", "", "record --max-depth 1 / perf (no -g)")
			ratio(w, "record-ip", "bpftrace-ip", "", "record --max-depth 1 / bpftrace count()")
			if ((w, "record-budget") in t) {
				slow = 100 * (t[w, "record-budget"] / base[1, w] - 1)
				printf "  %-44s %6.2f%%%s\n", "record --budget 1% (10 kHz asked): slower by",
					slow, slow <= 1.1 ? "  (goal <= 1.1%)" : "  MISSED: goal <= 1.1%"
				if (slow > 1.1)
					missed++
			}
		}
		printf "\ncost per sample against depth (one stack, every frame kept), ns:\n"
		printf "  %6s %10s %10s %8s\n", "depth", "unwind", "hotstack", "ratio"
		for (d = 8; d <= 1024; d *= (d < 64 ? 8 : 4)) {
			w = "deep:" d ":1"
			if (!((w, "hotstack") in c))
				continue
			printf "  %6d %10.0f %10.0f %7.2fx\n", d, c[w, "unwind"], c[w, "hotstack"],
				c[w, "unwind"] ? c[w, "hotstack"] / c[w, "unwind"] : 0
			dx[++nd] = d; du[nd] = c[w, "unwind"]; dh[nd] = c[w, "hotstack"]
		}
		printf "cost per sample against distinct stacks (depth 16, 4096-entry table), ns:\n"
		split("1 64 1024 3072", ps, " ")
		for (i = 1; i <= 4; i++) {
			w = "deep:16:" ps[i]
			if ((w, "hotstack") in c) {
				printf "  %6d %10.0f\n", ps[i], c[w, "hotstack"]
				px[++np] = ps[i]; ph[np] = c[w, "hotstack"]
			}
		}
		for (w in ws)
			if (ws[w])
				printf "worst case (%s: max_depth %d, collapse, 8192 hostile user " \
					"frames): %.0f ns/sample, no timed sample over %d ns\n", w,
					w == "worst" ? 1024 : 127, (wt[w] - spin) / ws[w], wm[w]
		if (cs)
			printf "worst case (collide: max_depth 127, 256 user stacks that hash alike): " \
				"%.0f ns/sample, no timed sample over %d ns, %d of %d samples " \
				"dropped as collisions\n", (ct - cspin) / cs, cm, ccoll, cs
		if (nd)
			chart()
		if (missed)
			printf "%d target(s) missed: see the README (Overhead) for why\n", missed
	}
	# The two curves as an SVG chart: ns/sample by depth and by distinct
	# stacks (both log2 on x), on one scale.
	function chart(    i) {
		ymax = 1
		for (i = 1; i <= nd; i++) { if (dh[i] > ymax) ymax = dh[i]; if (du[i] > ymax) ymax = du[i] }
		for (i = 1; i <= np; i++) if (ph[i] > ymax) ymax = ph[i]
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"840\" height=\"330\" " \
			"font-family=\"sans-serif\" font-size=\"12\">\n" > svg
		printf "<text x=\"20\" y=\"20\">ns/sample against depth</text>\n" > svg
		printf "<text x=\"440\" y=\"20\">ns/sample against distinct stacks</text>\n" > svg
		printf "<text x=\"20\" y=\"322\">grey: the unwind floor; red: hotstack; " \
			"the top is %.0f ns</text>\n", ymax > svg
		line(dx, du, nd, 20, "#999")
		line(dx, dh, nd, 20, "#c00")
		line(px, ph, np, 440, "#c00")
		print "</svg>" > svg
		close(svg)
		printf "chart: %s\n", svg
	}
	function line(xs, ys, n, x0, color,    i, pts, x, y, lx0, lx1) {
		lx0 = log(xs[1]) / log(2)
		lx1 = log(xs[n]) / log(2)
		pts = ""
		for (i = 1; i <= n; i++) {
			x = x0 + 20 + (lx1 > lx0 ? (log(xs[i]) / log(2) - lx0) / (lx1 - lx0) : 0) * 340
			y = 280 - ys[i] / ymax * 240
			pts = pts sprintf("%.0f,%.0f ", x, y)
			printf "<text x=\"%.0f\" y=\"298\">%d</text>\n", x - 8, xs[i] > svg
		}
		printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n",
			color, pts > svg
	}'
# Off-CPU time on the pipe ping-pong: the cost of a context switch under
# each off-CPU profiler and hs_bench.ko's floors (the probe alone, and the
# walk of the stack at each switch-out: the kernel's unwinder, which bcc's
# offcputime runs as well), the loop's own time against it unprofiled.
sed -n 's/^OFFCPU //p' "$log" | awk "$verdict"'
	# OFFCPU NAME ITERS MODE HZ ELAPSED ...: two switches an iteration.
	$1 == "none" { if (!b1) b1 = $5; else b2 = $5; next }
	{ order[++n] = $1; t[$1] = $5; it = $2 }
	END {
		if (!b1 || !n)
			exit
		printf "\noff-CPU time, pipe ping-pong (%d round trips): unprofiled %.1f ms and %.1f ms\n",
			it, b1 / 1e6, b2 / 1e6
		printf "  %-14s %10s %16s\n", "profiler", "time ms", "ns/switch added"
		for (i = 1; i <= n; i++)
			printf "  %-14s %10.1f %16.0f\n", order[i], t[order[i]] / 1e6,
				(t[order[i]] - b1) / (2 * it)
		ratio("record", "bcc-k", 0.5, "record --off-cpu / bcc offcputime -K")
		ratio("record-both", "bcc", 0.5, "record --off-cpu --stacks both / bcc offcputime")
		ratio("record-wakers", "bcc-wakers-k", "",
		      "record --off-cpu --wakers / bcc offwaketime -K")
		ratio("switch-unwind", "bcc-k", "", "the walk alone (switch-unwind) / bcc offcputime -K")
		ratio("record", "switch-unwind", "", "record --off-cpu / the walk alone")
		ratio("record", "bpftrace", "", "record --off-cpu / bpftrace (the method of offcputime)")
		if (missed)
			printf "%d target(s) missed: see the README (Overhead) for why\n", missed
	}
	function ratio(a, b, goal, what) {
		if (t[a] && t[b] > b1)
			verdict((t[a] - b1) / (t[b] - b1), goal, what, 56)
	}'
# User stacks: a sample's cost with a 10- and a 20-frame user stack, by
# frame pointers and by unwind tables (and perf --call-graph dwarf), a
# frame's from the difference of the two depths; the goals: a frame by
# tables at most twice a frame by frame pointers, a 20-frame sample by
# tables at most 1.5 times one by frame pointers.
sed -n 's/^USER //p' "$log" | awk "$verdict"'
	# USER BUILD DEPTH MODE ELAPSED SAMPLES [BYTES]
	$3 == "none" { base[$1, $2] = $4; next }
	{ k = $1 SUBSEP $2 SUBSEP $3; c[k] = $5 ? ($4 - base[$1, $2]) / $5 : 0; s[k] = $5; b[k] = $6
	  if (!(($1, $3) in seen)) { seen[$1, $3] = 1; order[++n] = $1 SUBSEP $3 } }
	END {
		if (!n)
			exit
		printf "\nuser stacks (uw_tree, 10 kHz cpu-clock), ns a sample:\n"
		printf "  %-24s %10s %10s %12s %14s\n", "build, walk", "10 frames", "20 frames",
			"a frame", "perf bytes"
		for (i = 1; i <= n; i++) {
			split(order[i], p, SUBSEP)
			lo = c[p[1], 4, p[2]]; hi = c[p[1], 14, p[2]]
			f[p[1], p[2]] = (hi - lo) / 10
			printf "  %-24s %10.0f %10.0f %12.1f %14s\n", p[1] ", " p[2], lo, hi,
				f[p[1], p[2]], b[p[1], 14, p[2]] ? b[p[1], 14, p[2]] " a sample" : ""
		}
		if (f["fp", "fp"] > 0)
			verdict(f["nofp", "tables"] / f["fp", "fp"], 2, "a frame by tables / by frame pointers", 56)
		if (c["fp", 14, "fp"] > 0) {
			verdict(c["nofp", 14, "tables"] / c["fp", 14, "fp"], 1.5,
				"a 20-frame sample by tables / by frame pointers", 56)
			verdict(c["fp", 14, "tables"] / c["fp", 14, "fp"], "",
				"the same build walked by tables / by frame pointers", 56)
		}
		if (c["nofp", 14, "perf-dwarf"] > 0)
			verdict(c["nofp", 14, "tables"] / c["nofp", 14, "perf-dwarf"], "",
				"a 20-frame sample by tables / perf --call-graph dwarf", 56)
		if (missed)
			printf "%d target(s) missed: see the README (User stacks)\n", missed
	}'
sed -n 's/^UWALL //p' "$log" | awk 'NF == 3 {
	printf "\nthe whole system (record -a while a dozen binaries run): %d tables, %.1f MiB, of %d processes%s\n",
		$1, $2, $3, $2 < 16 ? "  (goal < 16 MiB)" : "  MISSED: goal < 16 MiB" }'
# The agent's own cost, 500 containers (goals: 1% of a CPU, 50 MB).
sed -n 's/^AGENT //p' "$log" | awk '
	NF == 5 && $3 > 0 {
		if (!n++)
			printf "\nthe agent, 500 containers, --group-by container, intervals of 10 s " \
				"(icount: a CPU of 10^9 instructions a second):\n" \
				"  %-10s %12s %10s %8s\n", "sampling", "CPU", "VmHWM", "profiles"
		cpu = 100 * $2 / $3
		printf "  %-10s %11.2f%% %7.1f MB %8d  %s, %s\n", $1, cpu, $4 / 1024, $5,
			cpu <= 1 ? "(goal <= 1%)" : "MISSED: goal <= 1%",
			$4 <= 51200 ? "(goal <= 50 MB)" : "MISSED: goal <= 50 MB"
	}'
# The tables of a few of Debian's binaries, as the tool builds them here.
make -s -C "$repo/tests/bench" uw_tables >/dev/null &&
	printf '\nunwind tables of Debian binaries (goal: at most 8 bytes a row):\n' &&
	"$repo/tests/bench/uw_tables" /usr/lib/x86_64-linux-gnu/libc.so.6 \
		/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 /usr/lib/x86_64-linux-gnu/liblzma.so.5 |
	sed 's/^/  /'
