# SPDX-License-Identifier: GPL-2.0
# The README's fleet install under a real systemd (tests/vm/systemd.sh
# boots a Debian root with systemd as PID 1): the tool's package installed
# with apt, the module where DKMS puts it and loaded at boot's
# modules-load.d, one edit of /etc/hotstack/agent.conf, `systemctl enable
# --now hotstack-agent` against hs_listen on the loopback (the config's
# own push URL), its pushes read back with go tool pprof, the unit's
# sandbox as the kernel sees it, reload, stop, and the module loaded after
# the agent started.
. /tests/lib.sh
L=/tmp/l
rel=$(uname -r)

# journal: the agent's lines in the journal; journal_has TEXT: one has it.
journal() {
	journalctl -q -o cat -u hotstack-agent
}
journal_has() {
	journal | grep -q -e "$1"
}
agent_pid() {
	systemctl show -p MainPID --value hotstack-agent
}

check "apt installs the tool's package (its dependencies are there)" \
	apt-get install -y -q /tests/hotstack.deb
check "the unit is installed, not enabled, not started" sh -c '
	systemctl cat hotstack-agent >/dev/null &&
	[ "$(systemctl is-enabled hotstack-agent)" = disabled ] &&
	! systemctl -q is-active hotstack-agent'

# The module as the DKMS package leaves it: hotstack.ko in updates/dkms,
# its modules-load.d and modprobe.d files from the package.
mkdir -p /lib/modules/$rel/updates/dkms /tmp/dkms
cp /tests/hotstack.ko /lib/modules/$rel/updates/dkms/
depmod -a
dpkg-deb -x /tests/hotstack-dkms.deb /tmp/dkms
cp /tmp/dkms/etc/modules-load.d/hotstack.conf /etc/modules-load.d/
cp /tmp/dkms/etc/modprobe.d/hotstack.conf /etc/modprobe.d/
check "systemd-modules-load loads hotstack from the package's modules-load.d" sh -c '
	systemctl restart systemd-modules-load && grep -q "^hotstack " /proc/modules &&
	[ -c /dev/hotstack ]'

# The one edit: intervals of a second, a label. The push URL is the
# config's own (http://localhost:4040).
sed -i -e 's/^interval .*/interval 1/' -e 's/^#label env=production/label env=vm/' \
	/etc/hotstack/agent.conf
listen_start $L 200
check "systemctl enable --now hotstack-agent" systemctl enable --now hotstack-agent
check "the agent is active (it told systemd READY=1)" systemctl -q is-active hotstack-agent
wait_requests $L 3
check "it pushes to the config's URL: 3 profiles or more, each POST /ingest answered 200" \
	sh -c "awk '\$3 != \"POST\" || \$4 !~ /^\/ingest\?/ || \$5 != 200 { bad = 1 }
		END { exit !(NR >= 3 && !bad) }' $L/log"
check_output "with the config's name and label" 'name=hotstack%7B.*env%3Dvm%7D|name=hotstack\{.*env=vm\}' \
	cat $L/log
pushed_profiles() {
	for r in $(awk '$5 == 200 { print $1 }' $L/log); do
		hs_listen -x $L/$r.req $L/$r.pb && pprof -raw $L/$r.pb >$L/$r.raw 2>&1 &&
			grep -q '^Samples:' $L/$r.raw || { cat $L/$r.raw; return 1; }
	done
}
check "every pushed profile is a pprof go tool pprof reads" pushed_profiles
# The kernel's addresses (/proc/kallsyms, and CAP_SYSLOG to see them),
# which the sandbox must leave it: else it falls back to read()'s text,
# which leaves out the samples between a read and its SNAPSHOT.
fallbacks() {
	journal | grep -c -e "no kernel text symbol" -e "no mmap"
}
check_output "it reads the kernel's addresses, with no fallback to read()'s text" '^0$' fallbacks
check_output "systemctl status shows the agent's own status line" \
	'^StatusText=[0-9]+ intervals, [0-9]+ samples' systemctl show -p StatusText hotstack-agent
check_output "its log is in the journal" 'interval [0-9]+ \[[0-9]+, [0-9]+\) .*push: ' journal

# The sandbox, as the kernel sees the running agent.
pid=$(agent_pid)
# CAP_DAC_READ_SEARCH 2, CAP_SYS_PTRACE 19, CAP_SYSLOG 34, CAP_PERFMON 38.
check_output "its capabilities are the unit's four" '^CapBnd:[[:space:]]+0000004400080004$' \
	grep CapBnd /proc/$pid/status
check_output "NoNewPrivileges and a seccomp filter are on" '^NoNewPrivs:[[:space:]]+1 Seccomp:[[:space:]]+2$' \
	sh -c "echo \$(grep -E '^(NoNewPrivs|Seccomp):' /proc/$pid/status)"
check_output "/ is read-only to it (ProtectSystem=strict)" 'Read-only file system' \
	nsenter -t $pid -m touch /usr/hotstack-test

reloaded() {
	systemctl reload hotstack-agent &&
		wait_until journal_has "SIGHUP: log and kernel symbols opened again" &&
		systemctl -q is-active hotstack-agent
}
check "systemctl reload: SIGHUP, and it goes on" reloaded

t_stop=$(date +%s)
check "systemctl stop: it ends within the unit's timeout" systemctl stop hotstack-agent
check_output "and exits 0 (Result=success, status 0)" '^Result=success ExecMainStatus=0$' \
	sh -c 'echo $(systemctl show -p Result -p ExecMainStatus hotstack-agent)'
last_at_stop() {
	u=$(tail -n 1 $L/log | sed -n 's/.*[?&]until=\([0-9]*\).*/\1/p')
	echo "last until $u, stopped at $t_stop"
	[ -n "$u" ] && [ $u -ge $t_stop ] && [ $u -le $((t_stop + 2)) ]
}
check "stopping pushed the last interval, up to the stop" last_at_stop
check_output "its last line says what it pushed" 'stopped: [0-9]+ intervals \(0 lost\), .* pushed [0-9]+, rejected 0, dropped 0' \
	journal

# The module unloaded: starting the unit loads it (modprobe@hotstack).
rmmod hotstack
n=$(requests $L)
check "with the module unloaded, systemctl start loads it and the agent starts" sh -c '
	systemctl start hotstack-agent && systemctl -q is-active hotstack-agent &&
	grep -q "^hotstack " /proc/modules'
wait_requests $L $((n + 2))
check "and its session pushes" [ $(requests $L) -ge $((n + 2)) ]
check_output "with no failure or restart" '^0 success$' \
	sh -c 'echo $(systemctl show -p NRestarts --value hotstack-agent) $(systemctl show -p Result --value hotstack-agent)'
systemctl stop hotstack-agent

# Started while the module cannot be loaded (DKMS has not built it yet, a
# Secure Boot key not enrolled): the agent waits; once the module is
# loaded, it says why it exits, and systemd starts it again with the
# device allowed.
rmmod hotstack
mv /lib/modules/$rel/updates/dkms/hotstack.ko /tmp/
check "with no module to load, the unit starts and the agent waits for it" sh -c '
	systemctl start hotstack-agent && systemctl -q is-active hotstack-agent'
wait_until journal_has "waiting for the module"
mv /tmp/hotstack.ko /lib/modules/$rel/updates/dkms/
modprobe hotstack
wait_until journal_has "came after this service started"
check_output "once the module is loaded, the agent says why it exits" \
	'/dev/hotstack: Operation not permitted: the module came after this service started, .*: exiting, for systemd to start it again' \
	journal
restarted() {
	[ "$(systemctl show -p NRestarts --value hotstack-agent)" = 1 ] &&
		systemctl -q is-active hotstack-agent
}
# RestartSec=10, then its start: up to 40 s.
wait_until restarted || wait_until restarted
n=$(requests $L)
wait_requests $L $((n + 2))
check "systemd started it again once (Restart=on-failure), and it pushes" sh -c "
	[ \$(systemctl show -p NRestarts --value hotstack-agent) = 1 ] && [ $(requests $L) -ge $((n + 2)) ]"
systemctl stop hotstack-agent
journal | tail -n 12 | sed 's/^/# /'
listen_stop
