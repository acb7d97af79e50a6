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

# What a session holds, said: status's memory is the whole of info's tables
# figure when it is the one session (both in MiB to 0.1), and not 0.
hotstack record -a -o /tmp/mem.folded >/dev/null 2>&1 &
rec=$!
wait_session
mem_said() {
	info=$(hotstack info | awk '$1 == "tables:" { print $2 }')
	st=$(hotstack status --json | sed -n 's/.*"memory": \([0-9]*\).*/\1/p')
	awk -v info="$info" -v st="$st" 'BEGIN { m = sprintf("%.1f", st / 1048576)
		print (m == info && st > 0) ? "ok " m " MiB" : "bad: " m " MiB, info " info }'
}
check_output "hotstack status says the session's memory: info's tables figure" '^ok' mem_said
sed 's/^/# /' /tmp/check.out
kill -INT $rec
wait $rec
check "record ends cleanly on SIGINT" [ $? -eq 0 ]
check "rmmod hotstack" rmmod hotstack
