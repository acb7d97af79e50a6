# SPDX-License-Identifier: GPL-2.0
# arm64 under -icount, where QEMU's PMUv3 also counts instructions: record
# samples them, through the same overflow NMIs as cycles (make check runs
# this with tests/vm/run.sh arm64 --icount --script).
. /tests/lib.sh

check "insmod hotstack.ko" reload
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
hotstack record -e instructions -c 100000 -o /tmp/i.folded -- \
	sh -c 'echo "6 4 50" >/proc/hs_workload' >/tmp/i.out 2>&1
check "record -e instructions -c 100000 -- COMMAND" [ $? -eq 0 ]
sed 's/^/#   /' /tmp/i.out
check_output "it sampled instructions, no fallback" '^0$' \
	sh -c 'grep -c -e warning -e falling -e "not supported" /tmp/i.out'
check_output "the command's kernel stacks are in the profile" \
	'hs_workload_write \[hs_workload\];hs_rec_[ab] \[hs_workload\];.*hs_leaf' cat /tmp/i.folded
check "rmmod hs_workload" rmmod hs_workload
# Off-CPU stacks on the path users get: no probe of the guest's own on
# sched_switch in an icount boot.
. /tests/offcpu_path.sh
check "rmmod hotstack" rmmod hotstack
