# SPDX-License-Identifier: GPL-2.0
# Helpers for the in-guest tests: each check prints one TAP line.

# What the sessions sample: the PMU's cycles where the guest has a PMU
# (arm64: overflows arrive as pseudo-NMIs), else cpu-clock (hs_vmtest and
# record's default event).
#
# HS_RATE, for records of short commands: a hardware event's frequency mode
# starts at period 1 and takes tens of ticks to converge (perf throttles
# it meanwhile, and the samples land where the tick re-enables the PMU),
# so a fixed period there: 10^6 cycles, 1 ms at QEMU's 1 GHz.
if [ "$HOTSTACK_ARCH" = arm64 ]; then
	HS_EVENT=cycles
	HS_RATE="-c 1000000"
else
	HS_EVENT=cpu-clock
	HS_RATE="-F 1000"
fi
export HS_EVENT HS_RATE

# ok/notok DESC: a TAP line; one that came 10 s or more after this
# shell's last says how long it took (where a suite's time goes).
hs_tap() {
	read -r hs_now _ </proc/uptime
	hs_now=${hs_now%.*}
	echo "$*"
	[ $((hs_now - ${hs_tap_last:-hs_now})) -lt 10 ] ||
		echo "#   took $((hs_now - hs_tap_last)) s since the last check"
	hs_tap_last=$hs_now
}
ok() { hs_tap "ok - $*"; }
notok() { hs_tap "not ok - $*"; }

# check DESC CMD...: CMD must succeed.
check() {
	desc=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then
		ok "$desc"
	else
		notok "$desc"
		sed 's/^/#   /' /tmp/check.out
	fi
}

# check_refused DESC PATTERN CMD...: CMD must fail, for the reason PATTERN
# (an extended regular expression) names: in its output or in the kernel
# messages it caused (a refused insmod explains itself in dmesg).
check_refused() {
	desc=$1
	pattern=$2
	shift 2
	lines=$(dmesg | wc -l)
	if "$@" >/tmp/check.out 2>&1; then
		notok "$desc (it succeeded)"
		sed 's/^/#   /' /tmp/check.out
		return
	fi
	dmesg | tail -n +$((lines + 1)) >>/tmp/check.out
	if grep -E -q -e "$pattern" /tmp/check.out; then
		ok "$desc"
	else
		notok "$desc (refused, but not for '$pattern')"
		sed 's/^/#   /' /tmp/check.out
	fi
}

# check_output DESC PATTERN CMD...: CMD's output (stdout+stderr) must match
# the extended regular expression PATTERN; its exit status is not looked at.
check_output() {
	desc=$1
	pattern=$2
	shift 2
	"$@" >/tmp/check.out 2>&1
	if grep -E -q -e "$pattern" /tmp/check.out; then
		ok "$desc"
	else
		notok "$desc (no match for '$pattern')"
		sed 's/^/#   /' /tmp/check.out
	fi
}

# all_in_nmi FILE: record's summary, or each header of top in FILE, counts
# samples, and every one was taken in NMI context (hardware events).
all_in_nmi() {
	sed -n -e 's/.* \([0-9]*\) samples (\([0-9]*\) in NMI).*/\1 \2/p' \
		-e 's/^samples: .*(\([0-9]*\) in [0-9.]* s).*, \([0-9]*\) in NMI$/\1 \2/p' "$1" |
		awk '{ n++; if ($1 == 0 || $1 != $2) bad = 1 } END { exit bad || !n }'
}

# tap DESC CMD...: CMD prints its own TAP lines; a non-zero exit is a
# failure of its own, so a crash that printed nothing still counts.
# Its time goes to a comment: what makes a run long is in the log.
tap() {
	desc=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	rc=$?
	[ $rc -eq 0 ] || notok "$desc exited with status $rc"
	echo "# $desc took $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)s"
}

# wait_until CMD...: run CMD every 0.1 s until it succeeds, at most 20 s.
wait_until() {
	wait_for 20 "$@"
}
# wait_for SECONDS CMD...: wait_until for SECONDS, by the clock: a loaded
# host slows each try of CMD, not the deadline.
wait_for() {
	read -r _wf_t _ </proc/uptime
	_wf_end=$((${_wf_t%.*} + $1))
	shift
	while :; do
		"$@" && return 0
		read -r _wf_t _ </proc/uptime
		[ ${_wf_t%.*} -lt $_wf_end ] || return 1
		sleep 0.1
	done
}

# Wait (at most 20 s) until a hotstack session is running: a signal sent
# to a background tool after that finds its handler installed (before it,
# sh has a background job ignore SIGINT).
wait_session() {
	wait_until sh -c 'hotstack status 2>/dev/null | grep -q running'
}

# Load the module with the given parameters, unloading it first if loaded.
reload() {
	grep -q '^hotstack ' /proc/modules && rmmod hotstack
	insmod /tests/hotstack.ko "$@"
}

# wait_output FILE REGEX: wait (at most 20 s) until a line of FILE matches.
wait_output() {
	wait_until grep -q -E "$2" "$1" 2>/dev/null
}

# start_watch FILE: hotstack watch in the background, output in FILE, once
# it has joined the events group (it says so first); sets $watch.
start_watch() {
	hotstack watch >"$1" 2>&1 &
	watch=$!
	wait_output "$1" "watching the module's events"
}

# workload_start "DEPTH PATTERNS MS": the test workload in the background,
# over and over until workload_stop; sets $work (the process that writes,
# for -p). A test that samples it while a tool starts does not depend on
# how long the start takes.
workload_start() {
	(while echo "$1" >/proc/hs_workload; do :; done) &
	work=$!
	wait_until grep -q '^[1-9]' /proc/hs_workload ||
		notok "the workload runs within 20 s of its start"
}

# The workload's write ends at the signal (hs_workload.c).
workload_stop() {
	kill $work
	wait $work 2>/dev/null
}

# hs_listen, the agent tests' listener on the loopback (t_75_agent.sh,
# systemd.sh).
# listen_start DIR STATUS [MS]: hs_listen on :4040 in the background
# ($listener), each answer MS ms late.
listen_start() {
	rm -f "$1/port"
	hs_listen -d "$1" -p 4040 -s "$2" -w "${3:-0}" 2>/dev/null &
	listener=$!
	wait_until [ -s "$1/port" ] || notok "hs_listen listens within 20 s"
}
listen_stop() {
	kill $listener
	wait $listener 2>/dev/null
}
# requests DIR [STATUS]: how many requests DIR's listener answered (with STATUS).
requests() {
	awk -v s="${2:-}" 's == "" || $5 == s { n++ } END { print n + 0 }' "$1/log" 2>/dev/null ||
		echo 0
}
# wait_agent CMD...: wait_until for what an agent writes or pushes, at most
# 60 s: one just started opens its session first (kernel symbols, START,
# the tables of what it samples) and writes at the end of its first whole
# interval, 4 s of a quiet guest; once 19 s to its session alone, beside
# make check's 64-CPU guest.
wait_agent() {
	wait_for 60 "$@"
}
# wait_requests DIR N [STATUS]: until N requests (answered STATUS) came (wait_agent).
have_requests() {
	[ $(requests "$1" "${3:-}") -ge $2 ]
}
wait_requests() {
	wait_agent have_requests "$@"
}

# container_cgroups: cgroup paths (below the cgroup2 root) as the runtimes
# lay them out: $c1 systemd's docker scope of container $id1, $c2 kubelet's
# pod slice (pod $uid, systemd-escaped) with containerd's scope of $id2,
# $c3 a docker in docker (cgroupfs, nested).
container_cgroups() {
	id1=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	id2=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
	uid=1234abcd_5678_90ab_cdef_1234567890ab
	c1=system.slice/docker-$id1.scope
	c2=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$uid.slice
	c2=$c2/cri-containerd-$id2.scope
	c3=docker/$id1/docker/$id2
}

# hs_vmtest pty wants the pseudo-terminals' filesystem.
pty_ready() {
	grep -q '^devpts /dev/pts ' /proc/mounts ||
		{ mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; }
}
