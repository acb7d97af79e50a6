#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How many checks each guest script runs, per kernel: the plan, kept in
# tests/vm/plan.txt as "KERNEL SCRIPT CHECKS" lines, so that a script that
# stops early (an exit in its middle, a crash) cannot go unnoticed.
#
#   tests/vm/plan.sh count GUEST_LOG            SCRIPT CHECKS STATUS, per script
#   tests/vm/plan.sh check KERNEL GUEST_LOG     TAP lines: each script ran to
#                                               its end, status 0, its plan's count
#   tests/vm/plan.sh update KERNEL GUEST_LOG    rewrite KERNEL's lines from a log
#
# A script's checks are its "ok - " and "not ok - " lines between the
# "# begin SCRIPT" and "# end SCRIPT exit N took Ns" lines the guest's init
# prints around it.
#
# Another release's kernel of a kind (trixie-generic, sid-rt, ...) runs the
# plan of the kind (generic, rt): the same checks on every kernel. Where a
# check cannot apply to one kernel, a line of its own says how many it
# runs there, followed by "# why".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plan=$here/plan.txt

count() {
	sed 's/\r$//' "$1" | awk '
		/^# begin / { name = $3; n = 0; st = "missing"; order[++k] = name; next }
		/^# end / { st = $5; done[$3] = 1; checks[$3] = n; status[$3] = st; name = ""; next }
		name != "" && /^(ok|not ok) - / { n++ }
		END {
			for (i = 1; i <= k; i++) {
				s = order[i]
				if (done[s])
					print s, checks[s], status[s]
				else
					print s, n, "unfinished"
			}
		}'
}

# want KERNEL SCRIPT: the plan's count of SCRIPT on KERNEL.
want() {
	awk -v k="$1" -v b="$(base "$1")" -v s="$2" '
		$2 == s && $1 == k { mine = $3 }
		$2 == s && $1 == b { kind = $3 }
		END { print (mine != "" ? mine : kind) }' "$plan"
}

# base KERNEL: the kind whose plan KERNEL runs.
base() {
	case $1 in
	trixie-* | sid-*) echo "${1#*-}" ;;
	*) echo "$1" ;;
	esac
}

case ${1:-} in
count)
	count "$2"
	;;
check)
	kind=$2 tag="[$2]"
	ran=$(count "$3")
	while read -r script checks status; do
		if [ "$status" != 0 ]; then
			echo "not ok - $tag $script ran to its end (status: $status)"
			continue
		fi
		want=$(want "$kind" "$script")
		if [ -z "$want" ]; then
			echo "not ok - $tag $script has a plan (none in tests/vm/plan.txt; tests/vm/plan.sh update)"
		elif [ "$checks" != "$want" ]; then
			echo "not ok - $tag $script ran its plan's $want checks (it ran $checks)"
		else
			echo "ok - $tag $script ran its plan's $want checks, status 0"
		fi
	done <<<"$ran"
	# A script of the plan that did not start at all.
	awk -v k="$kind" -v b="$(base "$kind")" '$1 == k || $1 == b { print $2 }' "$plan" |
		sort -u | while read -r script; do
		grep -q "^$script " <<<"$ran" ||
			echo "not ok - $tag $script ran (the plan has it; it never began)"
	done
	;;
update)
	kind=$2
	ran=$(count "$3" | awk -v k="$kind" '$3 == 0 { print k, $1, $2 }')
	{ awk -v k="$kind" '$1 != k' "$plan" 2>/dev/null || true; echo "$ran"; } |
		sort -k1,1 -k2,2 >"$plan.new"
	mv "$plan.new" "$plan"
	;;
*)
	echo "usage: $0 count GUEST_LOG | check KERNEL GUEST_LOG | update KERNEL GUEST_LOG" >&2
	exit 2
	;;
esac
