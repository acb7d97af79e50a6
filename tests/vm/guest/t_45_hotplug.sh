# SPDX-License-Identifier: GPL-2.0
# CPU hotplug while sessions run, for every event the tool offers: every CPU
# but 0 goes offline and comes back. Software events take the hotplug lock
# when created and released, so a module that made or released them in its
# hotplug callbacks would hang the kernel here (the VM would time out).
. /tests/lib.sh

check "insmod hotstack.ko" reload
events="cpu-clock task-clock page-faults context-switches"
[ "$HS_EVENT" = cycles ] && events="$events cycles"
for ev in $events; do
	tap "hs_vmtest hotplug $ev" hs_vmtest hotplug $ev
done

# As users run it: hotstack record while every CPU but 0 goes and comes back.
cpus=$(seq 1 $(($(nproc) - 1)))
# others_online 0|1: every CPU but 0 offline or online; ok=1 if one failed.
others_online() {
	for cpu in $cpus; do
		echo $1 >/sys/devices/system/cpu/cpu$cpu/online || ok=1
	done
}
for ev in $events; do
	hotstack record -e $ev -a -o /tmp/hp.folded >/tmp/hp.out 2>&1 &
	rec=$!
	wait_session
	ok=0
	others_online 0
	others_online 1
	check "record -e $ev: every CPU but 0 offline and online again while it runs" [ $ok = 0 ]
	kill -INT $rec
	wait $rec
	check "record -e $ev then ends cleanly on SIGINT" [ $? -eq 0 ]
	check "and writes its profile" [ -s /tmp/hp.folded ]
	sed 's/^/#   /' /tmp/hp.out
done

# Stopped and closed while every CPU but 0 is offline, with watch taking
# the session's events: nothing may wait for an offline CPU (on
# PREEMPT_RT an irq_work that is not HARD runs in a per-CPU thread, which
# parks while its CPU is offline: irq_work_sync() at close would wait for it).
start_watch /tmp/hpo.log
hotstack record -e cpu-clock -a --table-entries 16 -o /tmp/hpo.folded >/tmp/hpo.out 2>&1 &
rec=$!
wait_session
ok=0
others_online 0
kill -INT $rec
wait $rec
rc=$?
check "record ends cleanly on SIGINT while every CPU but 0 is offline (status $rc, $ok)" \
	[ $rc -eq 0 -a $ok = 0 ]
others_online 1
check "hotstack watch saw it stop and close" wait_output /tmp/hpo.log " closed$"
kill -INT $watch
wait $watch

# The same with an event raised on a CPU and still queued there when the
# CPU goes offline (hs_inject.ko holds the PREEMPT_RT irq_work thread).
check "insmod hs_inject.ko" insmod /tests/hs_inject.ko
tap "hs_vmtest offline-event" hs_vmtest offline-event

# Suspend takes every CPU but 0 offline too: pm_test "core" goes as far as
# the platform's sleep and comes back (kernels with PM_DEBUG: Debian's).
if grep -qw mem /sys/power/state 2>/dev/null && [ -w /sys/power/pm_test ]; then
	echo 1 >/sys/module/suspend/parameters/pm_test_delay
	for ev in page-faults context-switches cpu-clock; do
		hotstack record -e $ev -a -o /tmp/sp.folded >/tmp/sp.out 2>&1 &
		rec=$!
		wait_session
		echo core >/sys/power/pm_test
		check "suspend and resume (pm_test core) while record -e $ev runs" \
			sh -c 'echo mem >/sys/power/state'
		echo none >/sys/power/pm_test
		kill -INT $rec
		wait $rec
		check "record -e $ev then ends cleanly on SIGINT" [ $? -eq 0 ]
	done
else
	echo "# suspend: this kernel cannot test it (no mem state or CONFIG_PM_DEBUG): not run"
fi

# A CPU that comes online after CONFIGURE has no table: reported.
start_watch /tmp/hpw.log
hs_vmtest hotplug-missed >/tmp/hpm.out
rc=$?
cat /tmp/hpm.out
[ $rc -eq 0 ] || notok "hs_vmtest hotplug-missed exited with status $rc"
id=$(sed -n 's/^# session //p' /tmp/hpm.out)
check "hotstack watch says which CPU came online without a table" \
	wait_output /tmp/hpw.log " session $id CPU 1 came online without a table: not sampled"
kill -INT $watch
wait $watch

# A CPU whose event cannot be made when it comes online (hs_inject.ko
# has perf refuse it): record says so, status counts the CPU out, and it is
# sampled again once its event can be made.
last=$(($(nproc) - 1))
# sampled N: the one session's event is live on N CPUs.
sampled() { hotstack status --json | grep -q "\"cpus_sampled\": $1,"; }
cpu_again() {
	echo 0 >/sys/devices/system/cpu/cpu$last/online &&
		echo 1 >/sys/devices/system/cpu/cpu$last/online
}
hotstack record -e $HS_EVENT -a -o /tmp/hf.folded >/tmp/hf.out 2>&1 &
rec=$!
wait_session
check "record -e $HS_EVENT samples all $((last + 1)) CPUs" wait_until sampled $((last + 1))
echo $last >/proc/hs_fail_event
check "CPU $last offline and online again while its event cannot be made" cpu_again
check "record says CPU $last is not sampled: its event failed" \
	wait_output /tmp/hf.out "^hotstack: CPU $last not sampled: its event failed \("
check "status counts CPU $last out: $last CPUs sampled" sampled $last
check "hs_inject failed the creation" [ "$(cat /proc/hs_fail_event)" -ge 1 ]
echo -1 >/proc/hs_fail_event
check "CPU $last offline and online again" cpu_again
check "once its event can be made, CPU $last is sampled again" wait_until sampled $((last + 1))
kill -INT $rec
wait $rec
check "record then ends cleanly on SIGINT" [ $? -eq 0 ]
sed 's/^/#   /' /tmp/hf.out
check "rmmod hs_inject" rmmod hs_inject

# Off-CPU time's probe runs on whichever CPU a task switches: a CPU that
# was offline when the session started has a table too, and its waits are
# timed once it is online (hs_vmtest nap measures its own sleep: "WALL CPU").
if grep -q ' __tracepoint_sched_switch$' /proc/kallsyms; then
	rm -f /tmp/hoff.txt
	echo 0 >/sys/devices/system/cpu/cpu$last/online
	hotstack record --off-cpu -o /tmp/hoff.folded -- sh -c \
		"echo 1 >/sys/devices/system/cpu/cpu$last/online &&
		 exec taskset -c $last hs_vmtest nap 300 /tmp/hoff.txt" >/tmp/hoff.out 2>&1
	check "record --off-cpu -- a 0.3 s sleep on CPU $last, offline when it started" [ $? -eq 0 ]
	echo 1 >/sys/devices/system/cpu/cpu$last/online
	check_output "record --off-cpu: no switch there untimed" ' 0 untimed' cat /tmp/hoff.out
	check_output "record --off-cpu: the sleep timed in hrtimer_nanosleep (but its time on the CPU)" \
		'^ok$' awk 'FILENAME == ARGV[1] { wall = $1; cpu = $2; next }
			/hrtimer_nanosleep/ { ns += $NF }
			END { ok = wall > 0 && ns >= wall - cpu - wall / 100 - 4000000 &&
				   ns <= wall + wall / 100
			      print ok ? "ok" : "bad " ns " of " wall }' \
		/tmp/hoff.txt /tmp/hoff.folded
	sed 's/^/#   /' /tmp/hoff.out
fi

check "rmmod hotstack" rmmod hotstack
