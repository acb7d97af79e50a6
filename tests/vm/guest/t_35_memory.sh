# SPDX-License-Identifier: GPL-2.0
# Memory: the tables are charged to the opener's memory cgroup (kernels with
# one: Debian's), and the session is kept as it was when they do not fit.
. /tests/lib.sh

check "insmod hotstack.ko" reload
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/hs
	tap "hs_vmtest memcg, in a memory cgroup" \
		sh -c 'echo $$ >/sys/fs/cgroup/hs/cgroup.procs && exec hs_vmtest memcg /sys/fs/cgroup/hs'
	rmdir /sys/fs/cgroup/hs
else
	echo "# memcg: this kernel has no memory cgroup controller (CONFIG_MEMCG): not run"
fi
umount /sys/fs/cgroup 2>/dev/null
check "rmmod hotstack" rmmod hotstack
