# SPDX-License-Identifier: GPL-2.0
# A guest of 64 CPUs (make check boots it with HOTSTACK_VM_SMP=64 and
# tests/vm/run.sh --script): one store of stacks for all of them, every CPU
# storing the same new stacks at once, and the memory the formula says.
. /tests/lib.sh

check_output "this guest has 64 online CPUs" '^0-63$' cat /sys/devices/system/cpu/online
check "insmod hotstack.ko" reload
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
tap "hs_vmtest store 50 (64 CPUs at once)" hs_vmtest store 50
tap "hs_vmtest store-memory" hs_vmtest store-memory

# The tool as users run it: a default record -a, its memory in status.
record_mem() {
	hotstack record -e cpu-clock -C "$1" -F 999 -o /tmp/s.folded >/tmp/s.out 2>&1 &
	rec=$!
	wait_session
	mem=$(hotstack status --json | sed -n 's/.*"memory": \([0-9]*\).*/\1/p')
	kill -INT $rec
	wait $rec
	echo "$mem"
}
two=$(record_mem 0-1)
sixteen=$(record_mem 0-15)
all=$(record_mem 0-63)
echo "# hotstack record -e cpu-clock -F 999: $two bytes on 2 CPUs, $sixteen on 16, $all on 64"
check "record's tables on 16 CPUs: at most twice those on 2 and under 8 MiB" \
	awk -v a="$two" -v b="$sixteen" 'BEGIN { exit !(a > 0 && b <= 2 * a && b < 8 * 1048576) }'
check "rmmod hs_workload" rmmod hs_workload
check "rmmod hotstack" rmmod hotstack
