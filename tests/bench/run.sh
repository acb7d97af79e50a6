#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: sampling overhead in the deterministic VM (-icount shift=0,
# sleep=off, one CPU: guest time = guest instructions, 1 ns each). All
# samplers run the same syscall loop in one boot at 10 kHz cpu-clock; the
# cost of a sample is the extra time over the unprofiled run divided by the
# samples taken. perf record -a -g and a bpftrace kstack-counting script
# run the same loop in the same boot when the host has them (the bench
# installs linux-perf and bpftrace). Prints the table and the ratios.
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
fi
sed -n 's/^BENCH //p' "$log" | awk '
	$1 == "none" { base[++nb] = $3; next }
	$1 == "spin" { spin = $3; next }
	$1 ~ /^worst/ { wt[$1] = $3; ws[$1] = $4; wm[$1] = $6; next }
	{
		mode[++n] = $1; t[n] = $3; s[n] = $4; h[n] = $5
		# perf and bpftrace count samples from before and after the loop
		# too: take those a 10 kHz clock gives during the loop.
		if ($1 == "perf" || $1 == "bpftrace")
			s[n] = int($3 * $2 / 1e9 + 0.5)
	}
	END {
		if (nb < 2 || n == 0) { print "bench: incomplete run"; exit 1 }
		printf "unprofiled: %.1f ms and %.1f ms (two runs: the spread is the noise)\n",
			base[1] / 1e6, base[2] / 1e6
		printf "%-12s %10s %9s %12s %14s\n", "sampler", "time ms", "samples",
			"ns/sample", "handler ns/s."
		for (i = 1; i <= n; i++) {
			c[mode[i]] = (t[i] - base[1]) / s[i]
			printf "%-12s %10.1f %9d %12.0f %14s\n", mode[i], t[i] / 1e6, s[i],
				c[mode[i]], h[i] ? sprintf("%.0f", h[i] / s[i]) : "-"
		}
		printf "hotstack / unwind floor:   %.2fx (goal <= 1.10x)\n",
			c["hotstack"] / c["unwind"]
		printf "hotstack-ip / empty floor: %.2fx (goal <= 1.20x)\n",
			c["hotstack-ip"] / c["empty"]
		if ("perf" in c)
			printf "perf record -a -g / hotstack: %.2fx the cost per sample\n",
				c["perf"] / c["hotstack"]
		if ("bpftrace" in c)
			printf "bpftrace kstack count / hotstack: %.2fx the cost per sample\n",
				c["bpftrace"] / c["hotstack"]
		for (w in ws)
			if (ws[w])
				printf "worst case (%s: max_depth %d, collapse, 8192 hostile user " \
					"frames): %.0f ns/sample, no timed sample over %d ns\n", w,
					w == "worst" ? 1024 : 127, (wt[w] - spin) / ws[w], wm[w]
	}'
