# SPDX-License-Identifier: GPL-2.0
# The tool's own symbolization (mmap + /proc/kallsyms) against read()'s text.
. /tests/lib.sh

check "insmod hotstack.ko" reload
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko

# One stopped session, written from read() and from the mmap: equal.
for depth in 64 4; do
	rm -f /tmp/s-read.folded /tmp/s-mmap.folded
	tap "hs_vmtest symbols $depth" hs_vmtest symbols $depth /tmp/s-read.folded /tmp/s-mmap.folded
	sort /tmp/s-read.folded >/tmp/s-read.sorted
	sort /tmp/s-mmap.folded >/tmp/s-mmap.sorted
	check "max_depth $depth: the tool's symbols give read()'s profile, line for line" \
		diff -u /tmp/s-read.sorted /tmp/s-mmap.sorted
	check "max_depth $depth: neither is empty" [ -s /tmp/s-mmap.sorted ]
	cp /tmp/s-mmap.folded /tmp/s-mmap-$depth.folded
done
# Every key: with cgroups, the test's (the root, "[cgroup /]", named by
# the module in read() and as the tool names it from the mmap) after the
# pid's.
check_output "the workload's functions are symbolized by the tool" \
	'hs_vmtest;\[pid [0-9]+\];(\[cgroup /\];)?\[task\];.*hs_workload_write \[hs_workload\];hs_rec_[ab] \[hs_workload\];.*hs_leaf \[hs_workload\](;.*)? [0-9]+$' \
	cat /tmp/s-mmap-64.folded
check_output "recursion collapsed by the module shows as read() shows it" \
	'\[collapsed [0-9]+\];.*hs_rec_a \[hs_workload\];hs_leaf' cat /tmp/s-mmap-64.folded
check_output "stacks cut at max_depth 4 are marked" '^hs_vmtest;\[pid [0-9]+\];(\[cgroup /\];)?\[task\];\[truncated\];' \
	cat /tmp/s-mmap-4.folded

# record symbolizes with /proc/kallsyms, silently.
hotstack record $HS_RATE -o /tmp/k.folded -- sh -c 'echo "6 4 50" >/proc/hs_workload' \
	>/tmp/k.out 2>&1
check "record as root" [ $? -eq 0 ]
check_output "record says nothing about kernel symbols" '^0$' \
	sh -c 'grep -c kptr_restrict /tmp/k.out'
check_output "its profile has the workload's frames" \
	'hs_workload_write \[hs_workload\];hs_rec_[ab] \[hs_workload\];.*hs_leaf \[hs_workload\](;.*)? [0-9]+$' \
	cat /tmp/k.folded

# kptr_restrict=2 hides addresses even from root: record says so and uses read().
old=$(cat /proc/sys/kernel/kptr_restrict)
echo 2 >/proc/sys/kernel/kptr_restrict
check "kptr_restrict=2 hides /proc/kallsyms' addresses" \
	sh -c '! grep -qv "^0000000000000000 " /proc/kallsyms'
hotstack record $HS_RATE -o /tmp/r.folded -- sh -c 'echo "6 4 50" >/proc/hs_workload' \
	>/tmp/r.out 2>&1
check "record with kptr_restrict=2 succeeds" [ $? -eq 0 ]
check_output "and says why it does not symbolize, and what to do" \
	'kernel addresses are hidden \(kernel.kptr_restrict\).*CAP_SYSLOG.*sysctl kernel.kptr_restrict=0' \
	cat /tmp/r.out
check_output "its profile comes from read(), symbolized by the module" \
	'hs_workload_write \[hs_workload\];hs_rec_[ab] \[hs_workload\];.*hs_leaf \[hs_workload\](;.*)? [0-9]+$' \
	cat /tmp/r.folded
echo "$old" >/proc/sys/kernel/kptr_restrict

# User frames symbolized by the tool (elfutils) from the maps captured while
# recording; the process comes from the pid key, or from the pid filter.
hotstack record $HS_RATE --stacks both --keys comm,pid -o /tmp/u.folded -- hs_vmtest uspin 1500 \
	>/tmp/u.out 2>&1
check "record --stacks both --keys comm,pid -- a user program" [ $? -eq 0 ]
check_output "its user frames are function names" \
	'^hs_vmtest;\[pid [0-9]+\];.*u_top;u_mid;u_(leaf|call)(;[^;]+)* [0-9]+$' cat /tmp/u.folded
check_output "and not addresses" '^0$' sh -c 'grep -c "u_top;0x\|0x[0-9a-f]*;u_leaf" /tmp/u.folded'
# pprof mappings: the running kernel's build ID (from its notes) and the
# user program's binary with its own (as elfutils found it: the same bytes
# follow the "GNU" of the build ID note in the file).
hotstack record $HS_RATE --stacks both --keys comm,pid --format pprof -o /tmp/u.pb.gz -- \
	hs_vmtest uspin 1500 >/tmp/ub.out 2>&1
check "record --stacks both --keys comm,pid --format pprof -- a user program" [ $? -eq 0 ]
hotstack report /tmp/u.pb.gz >/tmp/ub.txt 2>&1
# A note header: name size 4, descriptor size 20 (SHA-1), type 3 (NT_GNU_BUILD_ID), "GNU".
kid=$(od -An -tx1 -v /sys/kernel/notes | tr -d ' \n' |
	sed -n 's/.*040000001400000003000000474e5500\([0-9a-f]\{40\}\).*/\1/p')
check "this kernel has a build ID (a GNU build ID note in /sys/kernel/notes)" [ -n "$kid" ]
check_output "the pprof's [kernel.kallsyms] mapping carries it" \
	"^# mapping: \[kernel.kallsyms\], build id ${kid:-none}\$" cat /tmp/ub.txt
bin=$(command -v hs_vmtest)
check_output "the pprof maps hs_vmtest's frames to its binary, with a build ID" \
	"^# mapping: $bin, build id [0-9a-f]{40}\$" cat /tmp/ub.txt
bid=$(sed -n "s|^# mapping: $bin, build id \([0-9a-f]*\)\$|\1|p" /tmp/ub.txt)
check "which is the build ID in hs_vmtest's file" sh -c "[ -n '$bid' ] &&
	od -An -tx1 -v $bin | tr -d ' \n' | grep -q 474e5500$bid"
check "pprof -> pprof keeps the mappings" sh -c '
	hotstack report /tmp/u.pb.gz -o /tmp/u2.pb.gz && hotstack report /tmp/u2.pb.gz >/tmp/ub2.txt &&
	grep "^# mapping: " /tmp/ub.txt >/tmp/ubm.txt && [ -s /tmp/ubm.txt ] &&
	grep "^# mapping: " /tmp/ub2.txt | diff -u /tmp/ubm.txt -'
hotstack record $HS_RATE --stacks user -o /tmp/u2.folded -- hs_vmtest uspin 1500 >/tmp/u2.out 2>&1
check "record --stacks user -- a user program (no pid key)" [ $? -eq 0 ]
check_output "the command's pid names the process: its frames are names" \
	'^.*u_top;u_mid;u_(leaf|call) [0-9]+$' cat /tmp/u2.folded
# The whole system's user stacks: each sample's process names its frames
# (the module keys them by process for that), no [pid N] key unless asked.
# The recording ends once the program has run (a loaded host: whenever).
hotstack record $HS_RATE -a --stacks user -o /tmp/u3.folded >/tmp/u3.out 2>&1 &
rec=$!
wait_session
hs_vmtest uspin 1000
kill -INT $rec
wait $rec
check_output "record -a --stacks user names each process's user frames" \
	'^(.*;)?u_top;u_mid;u_(leaf|call)(;[^;]+)* [0-9]+$' cat /tmp/u3.folded
check_output "without a [pid N] key (not asked for)" '^0$' sh -c 'grep -c "\[pid " /tmp/u3.folded'
check_output "and no bare address for a frame" '^0$' \
	sh -c 'grep -c -E "(^|;)0x[0-9a-f]+[; ]" /tmp/u3.folded'

check "rmmod hs_workload" rmmod hs_workload
check "rmmod hotstack" rmmod hotstack
