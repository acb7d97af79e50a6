# SPDX-License-Identifier: GPL-2.0
# A guest with 200 possible CPUs and 2 online (-smp 2,maxcpus=200), as many
# cloud and VMware guests are: tables are for online CPUs, so the defaults
# work (make check boots it with tests/vm/run.sh --script).
. /tests/lib.sh

check_output "this guest has 200 possible CPUs" '^0-199$' cat /sys/devices/system/cpu/possible
check_output "and 2 online" '^0-1$' cat /sys/devices/system/cpu/online
check "insmod autostart=1 with the defaults" reload autostart=1
check_output "the autostart session's tables are sized for the 2 online CPUs" \
	'autostart: cpu-clock at 99 Hz, a store of 4096 stacks and 65536 frames, 4096 counts per CPU on 2 CPUs' dmesg
check_output "cat /dev/hotstack shows the persistent session's stacks" ' [0-9]+$' \
	cat /dev/hotstack
hotstack record -a -d 1 -o /tmp/b.folded >/tmp/b.out 2>&1
check "hotstack record -a -d 1 with the defaults" [ $? -eq 0 ]
sed 's/^/#   /' /tmp/b.out
check_output "its summary gives the tables: record's store, and on 2 CPUs as many counts a CPU" \
	'stacks \(store 16384 stacks, 262144 frames; 16384 a CPU on 2 CPUs: [0-9.]+ MiB\)' \
	cat /tmp/b.out
hotstack status >/tmp/b.status
check_output "hotstack status: the persistent session has 2 CPUs" \
	'^[0-9]+ +0 +running +cpu-clock +99 Hz +2 ' cat /tmp/b.status
check "rmmod hotstack" rmmod hotstack
