# SPDX-License-Identifier: GPL-2.0
# Table full, and the NMI stress: real NMIs drive the sample path while
# sessions come and go, snapshot, reset, and a CPU goes away.
. /tests/lib.sh

check "insmod hotstack.ko test_hooks=1" reload test_hooks=1
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
tap "hs_vmtest tablefull" hs_vmtest tablefull
if [ -e /tests/hs_nmi.ko ]; then
	# At least 10^6 NMIs on the generic kernel (one round reaches every
	# online CPU); fewer where KASAN makes each one slow.
	rounds=1000000
	[ "$HOTSTACK_KERNEL" = debug ] && rounds=50000
	check "insmod hs_nmi.ko" insmod /tests/hs_nmi.ko
	tap "hs_vmtest unknown" hs_vmtest unknown
	tap "hs_vmtest forkregs" hs_vmtest forkregs
	tap "hs_vmtest switchregs" hs_vmtest switchregs
	tap "hs_vmtest badbpregs" hs_vmtest badbpregs
	tap "hs_vmtest precise" hs_vmtest precise
	tap "hs_vmtest hardirq" hs_vmtest hardirq
	tap "hs_vmtest stress $rounds" hs_vmtest stress $rounds
	check "rmmod hs_nmi" rmmod hs_nmi
elif [ "$HS_EVENT" = cycles ]; then
	# The PMU's own overflow NMIs drive the sample path.
	tap "hs_vmtest hardirq" hs_vmtest hardirq
	tap "hs_vmtest stress-pmu 20" hs_vmtest stress-pmu 20
else
	notok "an NMI source for the stress test (hs_nmi.ko or a PMU)"
fi
check "rmmod hs_workload" rmmod hs_workload
check "rmmod hotstack after the stress" rmmod hotstack
