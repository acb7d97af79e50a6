#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's overhead check: a short run of make bench's large-read loop
# in the deterministic icount VM (guest time = guest instructions, so the
# same code gives about the same figures on any machine), failing when the
# cost per sample passes the limits the README states (Overhead: they
# guard against regressions; the targets are lower):
#   kernel stacks at most 1.07x the unwind-only floor (1.04-1.05x now),
#   IP only at most 1.15x the empty-handler floor (1.09-1.13x now);
# off-CPU time (record --off-cpu -a) adds at most 3800 ns to a context
# switch of a pipe ping-pong (3158, 1482, 3464 on 6.1, 6.12, 7.2 now;
# 7.2's from 3339 to 3479 in the last seven runs: 3600 left too little
# room; 3847, 2402, 4196 with the walk started in the unwinder's own frame);
# with a budget of 3%, it slows 2 s of the ping-pong by at most 3.3% from
# the first switch, and says at least 90% of what it takes, also where the
# budget is less than the tracepoint's call costs that loop (1%);
# and a budget of 1% (10 kHz asked for) slows the loop by at most 1.1%:
# from outside, under record -a and record -- CMD, a loop of 0.2 s and one
# of 2 s (each second apart) from the first sample; and after its first
# window, and each second of it as well (the loop timed
# in three parts, each against the same part unprofiled), its weighted
# samples are the loop's time, and
# its profile's top functions on an exact syscall loop are the unbudgeted
# one's (each share within 4.5 standard deviations of the samplings:
# the sampler jitters its periods, or both would see a few phases of the
# loop, each its own); user stacks that
# hash alike (the table's worst case) cost at most 12 us a sample (7 now;
# 28 when each was compared with up to 64 entries), most of them dropped
# as collisions.
# make bench runs the full benchmark, perf and bpftrace included.
#
#   tests/bench/check.sh [KERNEL]   (default generic: Debian 12's; the
#                                   limits hold on every kernel it is run on)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${1:-generic}
out=${HOTSTACK_OUT:-$repo/out}/overhead-$kernel
mkdir -p "$out"
HOTSTACK_OUT=$out HOTSTACK_VM_TIMEOUT=${HOTSTACK_VM_TIMEOUT:-1800} \
	"$repo/tests/vm/run.sh" "$kernel" --icount --script "$repo/tests/bench/quick.sh" \
	>"$out/run.log" 2>&1
rc=$?
# Every verdict line names the kernel it was measured on.
{
grep -E '^(ok|not ok) - ' "$out/run.log"
sed -n 's/^BENCH //p' "$out/run.log" | awk '
	function goal(what, r, limit) {
		printf "%s - overhead: %s %.3fx (goal <= %.2fx)\n",
			(r > 0 && r <= limit) ? "ok" : "not ok", what, r, limit
	}
	$1 == "none" { if (!base) base = $3; next }
	$4 > 0 { c[$1] = ($3 - base) / $4 }
	END {
		if (!base || !c["empty"] || !c["unwind"] || !c["hotstack"] || !c["hotstack-ip"]) {
			print "not ok - overhead: the icount run gave every figure"
			exit
		}
		printf "# ns/sample (guest instructions): empty %.0f, unwind %.0f, hotstack-ip %.0f, hotstack %.0f\n",
			c["empty"], c["unwind"], c["hotstack-ip"], c["hotstack"]
		goal("kernel stacks / the unwind-only floor:", c["hotstack"] / c["unwind"], 1.07)
		goal("IP only / the empty-handler floor:", c["hotstack-ip"] / c["empty"], 1.15)
	}'
sed -n 's/^BUDGET //p' "$out/run.log" | awk '
	{
		t[$1] = $3; n[$1] = $4
		if ($6 == "windows")
			for (i = 1; i <= $7; i++) { wt[$1, i] = $(7 + i); nw[$1] = $7 }
	}
	END {
		if (!t["none"] || !t["hotstack-budget"] || nw["none"] != 3 || nw["hotstack-budget"] != 3) {
			print "not ok - overhead: the icount run gave the budget figures"
			exit
		}
		slow = 100 * (t["hotstack-budget"] / t["none"] - 1)
		printf "%s - overhead: budget 1%% at 10 kHz slows the loop by %.3f%% (goal <= 1.1%%)\n",
			slow <= 1.1 ? "ok" : "not ok", slow
		worst = -100; desc = ""
		for (i = 1; i <= 3; i++) {
			s = 100 * (wt["hotstack-budget", i] / wt["none", i] - 1)
			if (s > worst) worst = s
			desc = desc sprintf(" %.3f%%", s)
		}
		printf "%s - overhead: budget 1%%: each second of the loop slowed by at most 1.1%% (%s)\n",
			worst <= 1.1 ? "ok" : "not ok", substr(desc, 2)
		# Weighted, the samples still stand for the time: 100 us each.
		r = n["hotstack-budget"] * 1e5 / t["hotstack-budget"]
		printf "%s - overhead: budget: %d weighted samples x 100 us are %.3f of the loop'"'"'s time (goal 0.95-1.05)\n",
			(r >= 0.95 && r <= 1.05) ? "ok" : "not ok", n["hotstack-budget"], r
	}'
sed -n 's/^FIRST //p' "$out/run.log" | awk '
	# med(A, N): the median of A[1..N].
	function med(a, n,    b, i, j, x) {
		for (i = 1; i <= n; i++) {
			x = a[i]
			for (j = i - 1; j >= 1 && b[j] > x; j--)
				b[j + 1] = b[j]
			b[j + 1] = x
		}
		return b[int((n + 1) / 2)]
	}
	{
		r = ++runs[$1, $2]
		t[$1, $2, r] = $5
		if ($8 == "windows")
			for (i = 1; i <= $9; i++) { wt[$1, $2, r, i] = $(9 + i); nw[$1, $2, r] = $9 }
	}
	END {
		split("200 2000", ms)
		split("a cmd", how)
		name["a"] = "record -a"; name["cmd"] = "record -- CMD"
		for (m = 1; m <= 2; m++)
			for (h = 1; h <= 2; h++) {
				k = how[h]; d = ms[m]; n = runs[k, d]; ok = n && runs["none", d] == n
				for (r = 1; ok && r <= n; r++)
					ok = t["none", d, r] && t[k, d, r] && nw[k, d, r] == nw["none", d, r]
				if (!ok) {
					printf "not ok - overhead: the icount run gave the %s budget figures (%d ms)\n", name[k], d
					continue
				}
				# Each run (and each of its parts) against the unprofiled medians.
				for (r = 1; r <= n; r++)
					tn[r] = t["none", d, r]
				base = med(tn, n)
				desc = ""
				for (r = 1; r <= n; r++) {
					all[r] = 100 * (t[k, d, r] / base - 1)
					sl[r] = all[r]
					for (i = 1; i <= nw[k, d, r]; i++) {
						for (q = 1; q <= n; q++)
							wn[q] = wt["none", d, q, i]
						s = 100 * (wt[k, d, r, i] / med(wn, n) - 1)
						if (s > sl[r])
							sl[r] = s
						if (n == 1)
							desc = desc sprintf(", second %d %.3f%%", i, s)
					}
					if (n > 1)
						desc = desc sprintf("%s %.3f%%", r > 1 ? "," : " (the median of", all[r])
				}
				if (n > 1)
					desc = desc ")"
				slow = med(sl, n)
				printf "%s - overhead: %s --budget 1%% from its first sample: a %d ms loop %.3f%% slower%s (goal <= 1.1%%)\n",
					slow <= 1.1 ? "ok" : "not ok", name[k], d, med(all, n), desc
			}
	}'
sed -n 's/^OFFCPU //p' "$out/run.log" | awk -v goal=3800 '
	# OFFCPU NAME ITERS none HZ ELAPSED ...: the ping-pong, two switches an iteration.
	{ t[$1] = $5; n[$1] = $2 }
	END {
		if (!t["none"] || !t["record"] || n["none"] != n["record"]) {
			print "not ok - overhead: the icount run gave the off-CPU figures"
			exit
		}
		ns = (t["record"] - t["none"]) / (2 * n["none"])
		printf "%s - overhead: record --off-cpu -a: %.0f ns a context switch (goal <= %d)\n",
			(ns > 0 && ns <= goal) ? "ok" : "not ok", ns, goal
	}'
sed -n 's/^OFFBUDGET //p' "$out/run.log" | awk '
	# OFFBUDGET noneB|budgetB ITERS MODE HZ ELAPSED 0 0 [SHARE]: 2 s of the
	# ping-pong unprofiled, then under a budget of B% (the share its summary says).
	{ t[$1] = $5; n[$1] = $2; share[$1] = $8 }
	END {
		for (b = 3; b >= 1; b -= 2) {
			if (!t["none" b] || !t["budget" b] || n["none" b] != n["budget" b]) {
				printf "not ok - overhead: the icount run gave the off-CPU budget %d%% figures\n", b
				continue
			}
			slow = 100 * (t["budget" b] / t["none" b] - 1)
			if (b == 3)
				printf "%s - overhead: record --off-cpu --budget 3%% -a from its first switch: the ping-pong %.3f%% slower (goal <= 3.3%%)\n",
					(slow <= 3.3) ? "ok" : "not ok", slow
			printf "%s - overhead: record --off-cpu --budget %d%% -a says %.3f%% of the CPU, the ping-pong %.3f%% slower (at least 90%% of it)\n",
				(share["budget" b] >= 0.9 * slow) ? "ok" : "not ok", b, share["budget" b], slow
		}
	}'
sed -n 's/^COLLIDE //p' "$out/run.log" | awk '
	$1 == "spin-collide" { spin = $3 }
	$1 == "collide" { t = $3; n = $4; coll = $7 }
	END {
		if (!spin || !n) {
			print "not ok - overhead: the icount run gave the collision figures"
			exit
		}
		us = (t - spin) / n / 1000
		printf "%s - overhead: stacks that hash alike: %.1f us a sample (goal <= 12)\n",
			(us <= 12) ? "ok" : "not ok", us
		printf "%s - overhead: stacks that hash alike: %d of %d samples dropped as collisions\n",
			(coll * 2 >= n) ? "ok" : "not ok", coll, n
	}'
sed -n 's/^TOP //p' "$out/run.log" | awk '
	$1 == "full" { order[++n] = $2; full[$2] = $3; n1 = $4; next }
	{ budget[$2] = $3; n2 = $4 }
	END {
		if (!n || !n2) {
			print "not ok - overhead: the icount run gave both profiles"
			exit
		}
		bad = ""
		for (i = 1; i <= n; i++) {
			# Within 4.5 standard deviations of two samplings of one
			# share (n1 and n2 samples). Without the periods jitter,
			# each rate sampled a few phases of the loop: off by 13
			# and 18 (do_syscall_64 13.1% and 22.9%, and
			# apparmor_file_permission 9.8% and 1.4%, on 6.12), 4.6
			# on 6.1.
			p = (full[order[i]] + budget[order[i]]) / 200
			lim = 450 * sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
			d = full[order[i]] - budget[order[i]]
			if (d > lim || d < -lim)
				bad = bad " " order[i]
			desc = desc sprintf(" %s %.1f%%/%.1f%%", order[i], full[order[i]], budget[order[i]])
		}
		printf "%s - overhead: budget 1%%: the top functions of the profile as without it (%d and %d samples):%s%s\n",
			bad == "" ? "ok" : "not ok", n1, n2, desc, bad == "" ? "" : " (off:" bad ")"
	}'
} | sed -E "s/^(ok|not ok) - overhead: /\1 - overhead [$kernel]: /"
exit $rc
