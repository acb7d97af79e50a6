# SPDX-License-Identifier: GPL-2.0
# Generic netlink: the family, status, events, malformed requests.
. /tests/lib.sh

check_output "hotstack status without the module says it is not loaded" \
	"module is not loaded" hotstack status
check "insmod hotstack.ko test_hooks=1" reload test_hooks=1
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
genl ctrl get name hotstack >/tmp/genl.out 2>&1
check_output "genl ctrl lists the family" '^Name: hotstack' cat /tmp/genl.out
check_output "genl ctrl lists the GET operation" '#1: +ID-0x1 ' cat /tmp/genl.out
check_output "genl ctrl lists the events group" 'name: events' cat /tmp/genl.out
check_output "hotstack status with no session says so" '^no hotstack sessions$' \
	hotstack status
tap "hs_vmtest genl-status" hs_vmtest genl-status
exec 3<>/dev/hotstack
check_output "hotstack status lists an open session" '^[0-9]+ +[0-9]+ +new +\(not configured\)' \
	hotstack status
check_output "hotstack status --json lists it" '"state": "new"' hotstack status --json
exec 3>&-

start_watch /tmp/watch.log
# Its TAP lines are counted too: shown once its session ID is read.
hs_vmtest genl-events >/tmp/events.out
rc=$?
cat /tmp/events.out
[ $rc -eq 0 ] || notok "hs_vmtest genl-events exited with status $rc"
id=$(sed -n 's/^# session //p' /tmp/events.out)
wait_output /tmp/watch.log " session $id closed"
kill -INT $watch
wait $watch
rc=$?
check "hotstack watch ends cleanly on SIGINT (status $rc)" [ $rc -eq 0 ]
# Not throttling: perf may throttle a hardware event any time (under
# emulation it lowers perf_event_max_sample_rate by itself); tested below.
# Nor a busy drop: a new stack whose place another vCPU was still filling
# 50 us later, when the host stopped that vCPU (a loaded host: once on
# trixie-debug, before the fill levels).
grep " session $id " /tmp/watch.log | grep -v -e ' throttled by perf ' -e ' first drop: busy' |
	sed -e 's/^[^ ]* session [0-9]* //' -e 's/ on CPU [0-9]*$//' >/tmp/watch.seq
fill='table 50% full
table 75% full
table 90% full
table 100% full
first drop: table full'
printf '%s\n' started "$fill" "$fill" stopped closed >/tmp/watch.want
check "hotstack watch saw start, fill levels and first drop once per generation, stop, close" \
	cmp /tmp/watch.seq /tmp/watch.want
cmp -s /tmp/watch.seq /tmp/watch.want || sed 's/^/#   /' /tmp/watch.log

# perf throttles an event past kernel.perf_event_max_sample_rate / HZ
# samples a tick (rounded up): a rate of 1 a second allows one a tick, so
# a 10 kHz cpu-clock is throttled within its first tick, however slow the
# machine.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
echo 1 >/proc/sys/kernel/perf_event_max_sample_rate
start_watch /tmp/throttle.log
hotstack record -e cpu-clock -F 10000 -d 1 -o /tmp/throttle.folded >/tmp/throttle.out 2>&1
kill -INT $watch
wait $watch
echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
check_output "hotstack watch reports perf throttling the event" \
	'session [0-9]+ throttled by perf on CPU [0-9]+' cat /tmp/throttle.log
check_output "hotstack record prints it too" '^hotstack: throttled by perf on CPU' \
	cat /tmp/throttle.out

# A storm: 3 events a session, 100 sessions at once; the rate limit (1 a
# second here: any machine makes events faster) holds the rest back, and
# the next event sent says how many. Then a session opened and closed (one
# event each) until that next one has come: every event was printed or
# counted as suppressed.
check "insmod event_rate=1" reload event_rate=1
start_watch /tmp/storm.log
storm_events() {
	awk '/ session / { n++ } match($0, /\(([0-9]+) earlier/) { s += substr($0, RSTART + 1, RLENGTH - 9) }
	     END { print n + s }' /tmp/storm.log
}
tap "hs_vmtest churn 100" hs_vmtest churn 100
want=300
for i in $(seq 100); do
	[ "$(storm_events)" -ge $want ] && break
	exec 3<>/dev/hotstack
	exec 3>&-
	want=$((want + 1))
	sleep 0.2
done
kill -INT $watch
wait $watch
check_output "an event storm is rate-limited and the suppressed ones are counted" \
	'\(([0-9]+) earlier events suppressed by the rate limit\)' cat /tmp/storm.log
check "every storm event was printed or counted as suppressed ($want)" \
	[ "$(storm_events)" -eq "$want" ]
# At most event_rate (1) a second: a clock second holds at most two of the
# rate limit's one-second windows.
check_output "at most 2 events in any clock second (event_rate=1)" '^ok$' \
	awk '/ session / { n[substr($1, 1, 8)]++ }
	     END { for (s in n) { k++; if (n[s] > 2) bad = 1 } print (k && !bad) ? "ok" : "over" }' \
	/tmp/storm.log

tap "hs_vmtest genl-errors" hs_vmtest genl-errors
check "insmod max_sessions=256" reload max_sessions=256
tap "hs_vmtest genl-dump" hs_vmtest genl-dump
check "insmod hotstack.ko again" reload test_hooks=1
tap "hs_vmtest unload-mapped" hs_vmtest unload-mapped
check "insmod hotstack.ko again" reload test_hooks=1
start_watch /tmp/watchr.log
check "rmmod with hotstack watch subscribed to the events" rmmod hotstack
kill -INT $watch
wait $watch
check "insmod hotstack.ko again" reload test_hooks=1
tap "hs_vmtest genl-perm (uid 1000)" hs_vmtest runas 1000 1000 hs_vmtest genl-perm outsider
tap "hs_vmtest genl-cred" hs_vmtest genl-cred
check "insmod group=1234" reload group=1234
tap "hs_vmtest genl-perm (uid 1000, group 1234)" \
	hs_vmtest runas 1000 1000,1234 hs_vmtest genl-perm member
hs_vmtest runas 1000 1000,1234 hotstack watch >/tmp/watchu.out 2>&1
check "hotstack watch in the group exits 1" [ $? -eq 1 ]
check_output "and says joining the events takes CAP_SYS_ADMIN" \
	'joining the module.s events needs CAP_SYS_ADMIN' cat /tmp/watchu.out
check "rmmod hs_workload" rmmod hs_workload
check "rmmod hotstack" rmmod hotstack
