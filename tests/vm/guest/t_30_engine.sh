# SPDX-License-Identifier: GPL-2.0
# The sampling engine: CONFIGURE/START/STOP, exact stacks, invariant, read().
. /tests/lib.sh

check "insmod hotstack.ko test_hooks=1" reload test_hooks=1
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
tap "hs_vmtest config-errors" hs_vmtest config-errors
tap "hs_vmtest lifecycle" hs_vmtest lifecycle
# 32-bit processes (x86_64 kernels with IA32 emulation: Debian's).
if [ -x /bin/hs_compat32 ] && [ -e /proc/sys/abi/vsyscall32 ]; then
	tap "hs_compat32 (the compat ioctl path)" hs_compat32
else
	echo "# compat32: no IA32 emulation in this kernel (or not x86_64): not run"
fi
tap "hs_vmtest mmap-race" hs_vmtest mmap-race
tap "hs_vmtest read-live" hs_vmtest read-live
# 100 ms a pattern: on a debug kernel under a loaded host, 40 ms left one
# of the 16 patterns unsampled once (29 stacks through hs_leaf in all).
tap "hs_vmtest workload (exact stacks)" hs_vmtest workload 6 16 100 64
tap "hs_vmtest workload (truncated)" hs_vmtest workload 40 1 300 16
tap "hs_vmtest workload (collapsed)" hs_vmtest workload 30 1 300 64 collapse
# One store of stacks for every CPU: the same stacks on two CPUs stored once.
tap "hs_vmtest shared" hs_vmtest shared
tap "hs_vmtest userstack" hs_vmtest userstack
tap "hs_vmtest io-worker" hs_vmtest io-worker
tap "hs_vmtest exec" hs_vmtest exec
tap "hs_vmtest context" hs_vmtest context
tap "hs_vmtest offcpu" hs_vmtest offcpu
tap "hs_vmtest events" hs_vmtest events
tap "hs_vmtest rate" hs_vmtest rate
check "insmod group=1234 test_hooks=1" reload group=1234
# Another user's process (root's), and one of uid 1000's own with root's
# capabilities, spinning in user mode meanwhile.
hs_vmtest uspin 600000 &
other=$!
hs_vmtest uspin-caps 1000 1000 600000 &
capsp=$!
# Once they spin: their user time (stat's 14th field) has grown.
for p in $other $capsp; do
	wait_until sh -c "[ \$(cut -d' ' -f14 /proc/$p/stat) -gt 0 ]" ||
		echo "# the spinner $p has not run within 20 s"
done
tap "hs_vmtest delegated (uid 1000, group 1234)" \
	hs_vmtest runas 1000 1000,1234 hs_vmtest delegated $other $capsp
kill $other $capsp
wait $other $capsp 2>/dev/null
check "read() of an unconfigured session without autostart is empty" \
	sh -c 'cat /dev/hotstack >/tmp/empty && [ ! -s /tmp/empty ]'

check_refused "insmod autostart=1 autostart_event=bogus is refused" \
	'autostart_event=bogus is not an event hotstack knows' \
	reload autostart=1 autostart_event=bogus
# A small max_memory_mb: the persistent session's store and counts made
# smaller to fit a quarter of it (1 MiB: 256 KiB), said in dmesg.
small_autostart() { reload autostart=1 max_memory_mb=1 && dmesg | tail -n 5; }
check_output "insmod autostart=1 max_memory_mb=1: tables made smaller, said" \
	'autostart: cpu-clock at 99 Hz, a store of (64|128|256|512) stacks' small_autostart
check "insmod autostart=1 autostart_freq=1000" reload autostart=1 autostart_freq=1000
echo "6 4 50" >/proc/hs_workload
check_output "cat /dev/hotstack shows the persistent session's stacks" \
	'hs_workload_write \[hs_workload\];hs_rec_[ab] .*hs_leaf' cat /dev/hotstack
check "cat /dev/hotstack prints stacks, and no raw kernel address" \
	sh -c 'cat /dev/hotstack >/tmp/p.folded && [ -s /tmp/p.folded ] && ! grep -q -E "0xffff[0-9a-f]{12}([^0-9a-f]|$)" /tmp/p.folded'
check "rmmod with the persistent session running" rmmod hotstack
check "rmmod hs_workload" rmmod hs_workload
