#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: sampling overhead in the deterministic VM (-icount shift=0,
# sleep=off, one CPU: guest time = guest instructions, 1 ns each). All
# samplers run the same syscall loop in one boot at 10 kHz cpu-clock; the
# cost of a sample is the extra time over the unprofiled run divided by the
# samples taken. Prints the table and the ratios the engine must meet.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}
mkdir -p "$out"
"$repo/tests/deps.sh"
HOTSTACK_VM_TIMEOUT=${HOTSTACK_VM_TIMEOUT:-1200} \
	"$repo/tests/vm/run.sh" generic --icount --script "$repo/tests/bench/guest.sh" \
	>"$out/bench.log" || { cat "$out/bench.log"; exit 1; }
sed -n 's/^BENCH //p' "$out/bench.log" | awk '
	$1 == "none" { base[++nb] = $3; next }
	{ mode[++n] = $1; t[n] = $3; s[n] = $4; h[n] = $5 }
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
	}'
