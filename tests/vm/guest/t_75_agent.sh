# SPDX-License-Identifier: GPL-2.0
# hotstack agent against hs_listen on the loopback: what it pushes (read
# back with go tool pprof), intervals that follow each other, samples that
# add up to the session's counters, a server down, answering 503 or 400,
# the module unloaded, SIGTERM, SIGHUP, --output-dir's rotation.
. /tests/lib.sh
# It pushes over TCP: kernels with TCP/IP (Debian's); the agent is
# userspace, so one such kernel is enough (the generic one).
if [ ! -e /proc/net/tcp ] || [ "$HOTSTACK_KERNEL" != generic ]; then
	echo "# agent: run on the generic kernel (TCP/IP, and the agent is userspace)"
	exit 0
fi
export HOME=/tmp
ip link set lo up

URL=http://127.0.0.1:4040
# cpu-clock on every architecture: sampleRate is then the frequency.
RATE="-e cpu-clock -F 1000"

# agent_stop: SIGTERM, at most 60 s for it to end; $agent_rc.
agent_stop() {
	t_kill=$(date +%s)
	kill -TERM $agent
	for i in $(seq 600); do
		[ -d /proc/$agent ] || break
		sleep 0.1
	done
	if [ -d /proc/$agent ]; then
		notok "the agent ended within 60 s of SIGTERM"
		kill -9 $agent
	fi
	wait $agent
	agent_rc=$?
	t_exit=$(date +%s)
}
# param NAME: that query parameter of each log line on stdin, URL-decoded.
param() {
	sed -n "s/^[0-9]* [0-9]* [A-Z]* [^?]*?\(.*&\)\{0,1\}$1=\([^& ]*\).*/\2/p" |
		while read -r v; do httpd -d "$v"; echo; done
}
# contiguous LOGFILE: the from/until of its 200 lines follow each other.
contiguous() {
	awk '$5 == 200' "$1" | param from >/tmp/from
	awk '$5 == 200' "$1" | param until >/tmp/until
	paste /tmp/from /tmp/until | awk '
		{ if ($2 <= $1 || (NR > 1 && $1 != last)) bad = 1; last = $2; n++ }
		END { exit bad || n < 2 }'
}
# profiles DIR: each request answered 200 as DIR/NNNN.pb and pprof -raw's DIR/NNNN.raw.
profiles() {
	ok=1
	for r in $(awk '$5 == 200 { print $1 }' "$1/log"); do
		hs_listen -x "$1/$r.req" "$1/$r.pb" &&
			pprof -raw "$1/$r.pb" >"$1/$r.raw" 2>"$1/$r.err" ||
			{ ok=0; echo "#   $r:"; sed 's/^/#     /' "$1/$r.err"; }
	done
	[ $ok = 1 ]
}
# raw_sums RAW: "ALL DROPPED COUNTED_COMMENT DROPPED_COMMENT FILTERED SAMPLES_COMMENT"
# from pprof -raw's text: every sample's count, those of [dropped] stacks, and
# the kernel's counters the agent noted.
raw_sums() {
	awk '
		/^Comment: hotstack session: / {
			gsub(",", ""); s = $5; c = $7; d = $9; f = $11
		}
		/^Samples:/ { in_s = 1; next }
		/^Locations/ { in_s = 0; in_l = 1; next }
		/^Mappings/ { in_l = 0 }
		in_s && /^ *[0-9]+( +[0-9]+)*: / {
			sub(":", "", $1); n++; v[n] = $1; all += $1
			# the outermost location id is the last one
			outer[n] = $NF
		}
		in_l && / \[dropped\] / { sub(":", "", $1); dropped_id = $1 }
		END {
			for (i = 1; i <= n; i++)
				if (outer[i] == dropped_id)
					dr += v[i]
			print all + 0, dr + 0, c + 0, d + 0, f + 0, s + 0
		}' "$1"
}

check "insmod hotstack.ko" reload
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko
check "hotstack agent --help lists --push and --interval" \
	sh -c 'hotstack agent --help | grep -q -e "--push URL" && hotstack agent --help | grep -q -e "--interval SECONDS"'
check_output "hotstack agent without --push or --output-dir is a usage error (status 2)" '^2$' \
	sh -c 'hotstack agent 2>/dev/null; echo $?'

# ---- pushes, read back --------------------------------------------------------
L=/tmp/l1
listen_start $L 200
workload_start "6 4 20"
hotstack agent -i 1 $RATE --push $URL --name hsapp --label env=test --label dc=vm1 \
	--log /tmp/a1.log &
agent=$!
wait_requests $L 4
agent_stop
# When the SIGTERM was sent, and when the agent had ended (a loaded host
# may take seconds between the two).
t_term=$t_kill
t_done=$t_exit
workload_stop
listen_stop
check "the agent exits 0 on SIGTERM (status $agent_rc)" [ $agent_rc -eq 0 ]
sed 's/^/# /' /tmp/a1.log
check_output "4 intervals or more were pushed, each a POST /ingest answered 200" '^ok$' \
	sh -c "awk '\$3 != \"POST\" || \$4 !~ /^\/ingest\?/ || \$5 != 200 { bad = 1 } END { print (NR >= 4 && !bad) ? \"ok\" : \"bad \" NR }' $L/log"
want="hsapp{hostname=$(hostname),kernel_release=$(uname -r),event=cpu-clock,env=test,dc=vm1}"
names_ok() {
	param name <$L/log | sort | uniq -c
	[ $(param name <$L/log | grep -c -v -F -x "$want") -eq 0 ] && [ -s $L/log ]
}
check "every push names hsapp with the host's, kernel's, event's and --label's labels" names_ok
check_output "format=pprof, sampleRate=1000 and spyName=hotstack on every push" '^0$' \
	sh -c "grep -c -v -e '&format=pprof&sampleRate=1000&spyName=hotstack ' $L/log"
check "the intervals are contiguous: each until is the next one's from" contiguous $L/log
check "every pushed profile is a pprof go tool pprof reads" profiles $L

# Each profile's sums against the counters the agent noted in it.
each_has_samples() {
	for r in $L/*.raw; do
		set -- $(raw_sums $r)
		[ $1 -gt 0 ] || { echo "$r has no samples: $*"; head -n 30 $r; cat /tmp/a1.log; return 1; }
	done
}
each_adds_up() {
	for r in $L/*.raw; do
		set -- $(raw_sums $r)
		[ $3 -gt 0 ] && [ $(($1 - $2)) -eq $3 ] && [ $2 -eq $4 ] &&
			[ $6 -eq $(($3 + $4 + $5)) ] ||
			{ echo "$r: $*"; grep "^Comment" $r; grep "interval" /tmp/a1.log; return 1; }
	done
}
generations() {
	cat $L/*.raw | sed -n 's/^Comment: hotstack interval: \([0-9]*\) of session [0-9]*, generation \([0-9]*\)$/\1 \2/p' |
		tee /dev/stderr |
		awk 'NR == 1 { g = $2 } { if ($1 != NR || $2 != g + NR - 1) bad = 1 }
			END { exit !(NR >= 4 && !bad) }'
}
totals() {
	total=$(for r in $L/*.raw; do raw_sums $r; done | awk '{ s += $6 } END { print s }')
	n=$(ls $L/*.raw | wc -l)
	grep "stopped:" /tmp/a1.log
	grep -q "stopped: $n intervals (0 lost), $total samples" /tmp/a1.log ||
		{ echo "pushed $n intervals, $total samples"; return 1; }
}
last_at_sigterm() {
	u=$(tail -n 1 $L/log | param until)
	echo "until $u, SIGTERM at $t_term, the agent ended at $t_done"
	[ $u -ge $t_term ] && [ $u -le $((t_done + 1)) ]
}
check "every pushed profile has samples" each_has_samples
check "in each, the stacks' samples are the kernel's counted, the [dropped] ones its drops" \
	each_adds_up
check "the pushes are the session's generations 1, 2, ... with none missing" generations
check_output "the workload's stacks are in the pushed profiles" 'hs_leaf \[hs_workload\]' \
	sh -c "cat $L/*.raw"
check "the pushes' samples add up to the session's, as the agent's last line says" totals
check "SIGTERM pushed the last interval: it ends when SIGTERM came in, before the agent ended" \
	last_at_sigterm
check_output "the agent logs each interval with the push's status" \
	'interval [0-9]+ \[[0-9]+, [0-9]+\) .* samples, .*; push: [0-9]+ pushed, [0-9]+ waiting, 0 dropped \(queue full\), 0 rejected' \
	cat /tmp/a1.log

# ---- the server down, then back: the backlog arrives, bounded --------------------------
L=/tmp/l2
listen_start $L 200
hotstack agent -i 1 $RATE --push $URL --queue 3 --log /tmp/a2.log &
agent=$!
wait_requests $L 2
listen_stop
t_down=$(date +%s)
n_down=$(requests $L)
sleep 6
listen_start $L 200
t_up=$(date +%s)
wait_until grep -q "answers again" /tmp/a2.log
n_up=$(requests $L)
wait_requests $L $((n_up + 1))
agent_stop
listen_stop
check "the agent exits 0 on SIGTERM after the server came back (status $agent_rc)" [ $agent_rc -eq 0 ]
# The push in flight when the listener was killed fails as curl saw it: its
# connection refused, or accepted and then closed unanswered.
check_output "while it was down the agent said so once, and that it retries" \
	"^1 .*cannot push profile [0-9]+ \\[[0-9]+, [0-9]+\\) to $URL: .*(Couldn't connect|Connection refused|Empty reply from server|Connection reset by peer).*; retrying" \
	sh -c "echo \$(grep -c 'cannot push profile' /tmp/a2.log) \$(grep 'cannot push profile' /tmp/a2.log)"
check_output "the queue held 3: the oldest were dropped, counted and said" \
	'dropped the oldest, profile [0-9]+ \[[0-9]+, [0-9]+\)' cat /tmp/a2.log
# Intervals: pushed (200) and dropped for room (the agent's log), against those it took.
backlog_arrived() {
	# What the queue held once the server answered again: the intervals
	# pushed that ended before the first push it answered (the agent
	# retries with a backoff: by then the queue may have dropped every
	# interval that ended while it was down, for newer ones). Down 6 s,
	# the queue is full: 3 consecutive intervals of which 2 at least end
	# before that second (a queue thrown away would leave 1 at most).
	first=$(awk -v k=$n_down 'NR > k && $5 == 200 { print $2; exit }' $L/log)
	n=$(awk -v k=$n_down 'NR > k && $5 == 200' $L/log | param until |
		awk -v f="${first:-0}" '$1 < f { n++ } END { print n + 0 }')
	echo "$n intervals that ended before the first push answered once it was back ($first)" \
		"were pushed then"
	echo "down at $t_down, back at $t_up; the listener's log:"
	cat $L/log
	[ $n -ge 2 ] && [ $n -le 3 ]
}
exactly_once() {
	a=$( { awk '$5 == 200' $L/log | param from
		sed -n 's/.*dropped the oldest, profile [0-9]* \[\([0-9]*\), .*/\1/p' /tmp/a2.log; } |
		sort -n | tr '\n' ' ')
	b=$(sed -n 's/.*interval [0-9]* \[\([0-9]*\), .*/\1/p' /tmp/a2.log | sort -n | tr '\n' ' ')
	echo "pushed and dropped: $a"
	echo "taken: $b"
	[ "$a" = "$b" ]
}
taken_contiguous() {
	sed -n 's/.*interval [0-9]* \[\([0-9]*\), \([0-9]*\)).*/\1 \2/p' /tmp/a2.log |
		awk '{ if ($2 <= $1 || (NR > 1 && $1 != last)) bad = 1; last = $2 }
			END { exit bad || NR < 4 }'
}
check "once back, the backlog arrived (at most the queue's 3)" backlog_arrived
check "each interval the agent took was pushed once or dropped once" exactly_once
check "the intervals it took are contiguous" taken_contiguous

# ---- 503: the same profile again; 400: said, not sent again ---------------------
L=/tmp/l3
listen_start $L 503
hotstack agent -i 1 $RATE --push $URL --log /tmp/a3.log &
agent=$!
wait_requests $L 2 503
listen_stop
listen_start $L 200
wait_requests $L 1 200
agent_stop
listen_stop
retried_503() {
	f=$(awk '$5 == 503' $L/log | head -n 1 | param from)
	echo "the first profile answered 503: from $f"
	awk '$5 == 200' $L/log | param from | grep -q -x "$f"
}
check "a profile answered 503 is sent again until answered 200" retried_503
check_output "the agent said the server answered 503 and that it retries" \
	'cannot push profile 1 .*HTTP 503: Service Unavailable; retrying' cat /tmp/a3.log

L=/tmp/l4
listen_start $L 400
hotstack agent -i 1 $RATE --push $URL --log /tmp/a4.log &
agent=$!
wait_requests $L 3
agent_stop
listen_stop
check "the agent exits 0 though the server refused everything (status $agent_rc)" \
	[ $agent_rc -eq 0 ]
check_output "a 400 is logged with the server's words, and the profile not sent again" \
	'refused profile [0-9]+ \[[0-9]+, [0-9]+\) with HTTP 400: Bad Request: not sent again' \
	cat /tmp/a4.log
sent_once() {
	# What the listener saw and the agent said, said when it fails.
	cat $L/log /tmp/a4.log
	[ $(param from <$L/log | sort | uniq -d | wc -l) -eq 0 ] && [ $(wc -l <$L/log) -ge 3 ]
}
check "each interval was sent once only" sent_once

# ---- the module: held by the agent's session; absent at the start --------------------
L=/tmp/l5
listen_start $L 200
hotstack agent -i 1 $RATE --push $URL --log /tmp/a5.log &
agent=$!
wait_requests $L 1
check_refused "rmmod while the agent's session is open is refused (in use)" \
	"unload module 'hotstack': Resource temporarily unavailable" \
	rmmod hotstack
n=$(requests $L)
wait_requests $L $((n + 2))
check "the agent goes on pushing after the refused rmmod" [ $(requests $L) -ge $((n + 2)) ]
agent_stop
rmmod hs_workload
rmmod hotstack
hotstack agent -i 1 $RATE --push $URL --log /tmp/a6.log &
agent=$!
wait_output /tmp/a6.log "waiting for the module"
check_output "started without the module, the agent waits for it" 'waiting for the module' \
	cat /tmp/a6.log
reload
insmod /tests/hs_workload.ko
n=$(requests $L)
wait_requests $L $((n + 2))
agent_stop
listen_stop
check "once the module is loaded, its session starts and pushes" \
	[ $(requests $L) -ge $((n + 2)) ]

# ---- the persistent session, its module unloaded and loaded again --------------------
L=/tmp/l7
listen_start $L 200
reload autostart=1 autostart_freq=1000
workload_start "6 4 20"
hotstack agent -i 1 --persistent --push $URL --log /tmp/a7.log &
agent=$!
wait_requests $L 2
workload_stop
rmmod hs_workload
# The agent opens the device only to read it: rmmod succeeds between two readings.
for i in $(seq 100); do
	rmmod hotstack 2>/dev/null && break
	sleep 0.1
done
check "rmmod between two readings of the persistent session" sh -c '! grep -q "^hotstack " /proc/modules'
sleep 2
reload autostart=1 autostart_freq=1000
insmod /tests/hs_workload.ko
workload_start "6 4 20"
n=$(requests $L)
wait_requests $L $((n + 3))
agent_stop
workload_stop
listen_stop
check "--persistent: the agent exits 0 (status $agent_rc)" [ $agent_rc -eq 0 ]
check_output "it saw the new session after the module came back" \
	'the persistent session is a new one' cat /tmp/a7.log
check "--persistent: every pushed profile is a pprof go tool pprof reads" profiles $L
check_output "--persistent: the pushes after the reload have the workload's samples" \
	'hs_leaf \[hs_workload\]' sh -c "cat \$(ls $L/*.raw | tail -n 2)"
holes_lost() {
	awk '$5 == 200' $L/log | param from | tail -n +2 >/tmp/f7
	awk '$5 == 200' $L/log | param until | head -n -1 >/tmp/u7
	holes=$(paste /tmp/f7 /tmp/u7 | awk '$1 != $2 { n++ } END { print n + 0 }')
	lost=$(sed -n 's/.*stopped: [0-9]* intervals (\([0-9]*\) lost).*/\1/p' /tmp/a7.log)
	echo "holes $holes, lost $lost"
	[ -n "$lost" ] && [ "$holes" -le "$lost" ] && [ "$lost" -le 3 ]
}
check "--persistent: from and until follow each other but for the intervals said lost" holes_lost

# ---- --output-dir keeps the newest N; SIGHUP opens the log again -----------------------
reload
rm -rf /tmp/od
hotstack agent -i 1 $RATE --output-dir /tmp/od --keep 3 --log /tmp/a8.log &
agent=$!
wait_agent sh -c '[ $(grep -c "interval [0-9]* \[" /tmp/a8.log 2>/dev/null) -ge 5 ]' 2>/dev/null
mv /tmp/a8.log /tmp/a8.log.1
kill -HUP $agent
wait_output /tmp/a8.log "SIGHUP: log and kernel symbols opened again"
wait_output /tmp/a8.log "interval [0-9]+ \["
agent_stop
check_output "SIGHUP: the agent logs to the new file" 'interval [0-9]+ \[' cat /tmp/a8.log
check_output "--keep 3: three files, hotstack-START.pb.gz" '^3 3$' \
	sh -c 'echo $(ls /tmp/od | wc -l) $(ls /tmp/od | grep -c -E "^hotstack-[0-9]{8}T[0-9]{6}Z\.pb\.gz$")'
newest_three() {
	want=$(cat /tmp/a8.log.1 /tmp/a8.log | sed -n "s/.*interval [0-9]* \[\([0-9]*\), .*/\1/p" |
		tail -n 3 | while read t; do date -u -d @$t +hotstack-%Y%m%dT%H%M%SZ.pb.gz; done)
	echo "want $want, have $(ls /tmp/od)"
	[ "$want" = "$(ls /tmp/od)" ]
}
check "the newest three: the last intervals' start times" newest_three
check "each file is a pprof go tool pprof reads" sh -c '
	for f in /tmp/od/*; do pprof -raw $f >/dev/null || exit 1; done'

# ---- --off-cpu: each interval's waits, pprof type off_cpu/nanoseconds --------------------
if grep -q ' __tracepoint_sched_switch$' /proc/kallsyms; then
	rm -rf /tmp/odo
	sh -c 'while :; do sleep 0.1; done' &
	sl=$!
	hotstack agent -i 1 --off-cpu -p $sl --output-dir /tmp/odo --log /tmp/a9.log &
	agent=$!
	wait_agent sh -c '[ $(grep -c "interval [0-9]* \[" /tmp/a9.log 2>/dev/null) -ge 2 ]' \
		2>/dev/null
	agent_stop
	kill $sl
	wait $sl 2>/dev/null
	check "agent --off-cpu exits 0 on SIGTERM (status $agent_rc)" [ $agent_rc -eq 0 ]
	check_output "it said it times waits, every switch" 'session [0-9]+: off-cpu at every switch' \
		cat /tmp/a9.log
	last=$(ls /tmp/odo | tail -n 1)
	check_output "its profiles' sample type is off_cpu/nanoseconds (go tool pprof -raw)" \
		'^off_cpu/nanoseconds' pprof -raw /tmp/odo/$last
	# In the intervals' files: the last, cut at the SIGTERM, may have none.
	check_output "with the loop's children's sleeps, in ns" \
		'^\[sleep\];.*hrtimer_nanosleep.* [0-9]{7,}$' \
		sh -c 'for f in /tmp/odo/*; do hotstack report --format folded $f; done'
fi

# ---- --group-by container: a profile per container an interval -------------------------
# Two processes in cgroups laid out as docker's systemd scope and a
# kubelet pod's containerd scope name them, a third in the pod's own
# cgroup (as its pause process) names the pod; the rest of the machine
# is the profile of no container. Each sample in its container's profile
# alone, and the profiles of an interval adding up to the session's.
# The kubelet's log directories name the pod's container and the pod.
cg=/sys/fs/cgroup
mounted=
grep -q " $cg cgroup2 " /proc/mounts || { mkdir -p $cg && mount -t cgroup2 none $cg && mounted=1; }
container_cgroups
# The pod's uid as Kubernetes writes it (systemd escapes its '-' as '_').
uid=$(echo $uid | tr _ -)
mkdir -p $cg/$c1 $cg/$c2 /var/log/containers /var/log/pods/shop_web-7d4b_$uid/nginx
: >/var/log/containers/web-7d4b_shop_nginx-$id2.log
sh -c "echo \$\$ >$cg/$c1/cgroup.procs && exec hs_vmtest uspin 600000" &
p1=$!
sh -c "echo \$\$ >$cg/$c2/cgroup.procs && exec hs_vmtest uspin 600000" &
p2=$!
sh -c "echo \$\$ >$cg/${c2%/*}/cgroup.procs && exec hs_vmtest uspin 600000" &
p3=$!
check "the two containers' processes and the pod's are in their cgroups" wait_until sh -c \
	"grep -qx $p1 $cg/$c1/cgroup.procs && grep -qx $p2 $cg/$c2/cgroup.procs &&
	 grep -qx $p3 $cg/${c2%/*}/cgroup.procs"
L=/tmp/lg
rm -rf /tmp/og
listen_start $L 200
hotstack agent -i 1 $RATE --group-by container --push $URL --output-dir /tmp/og --keep 2 \
	--log /tmp/ag.log &
agent=$!
# Three intervals with the pod's container in them, one with the pod's own.
pod_pushes() {
	[ $(param name 2>/dev/null <$L/log | grep -c "container.id=$id2") -ge 3 ] &&
		[ $(param name 2>/dev/null <$L/log | grep -c "{.*,k8s.pod.uid=$uid,") -ge 1 ]
}
wait_agent pod_pushes
agent_stop
listen_stop
kill $p3
wait $p3 2>/dev/null
sed 's/^/# /' /tmp/ag.log
check "agent --group-by container exits 0 on SIGTERM (status $agent_rc)" [ $agent_rc -eq 0 ]
base="hotstack{hostname=$(hostname),kernel_release=$(uname -r),event=cpu-clock"
# Named as the samples' labels are (each label once in Pyroscope's
# series), the workload the service: Kubernetes' namespace/container
# (namespace/pod for the pod's own cgroup), else the container's unit.
n1="$base,container.id=$id1,service_name=docker-$id1.scope}"
n2="$base,container.id=$id2,k8s.pod.uid=$uid,service_name=shop/nginx"
n2="$n2,k8s.namespace.name=shop,k8s.pod.name=web-7d4b,k8s.container.name=nginx}"
n3="$base,k8s.pod.uid=$uid,service_name=shop/web-7d4b,k8s.namespace.name=shop"
n3="$n3,k8s.pod.name=web-7d4b}"
group_names() {
	param name <$L/log | sort | uniq -c
	[ $(param name <$L/log | grep -c -F -x "$n1") -ge 3 ] &&
		[ $(param name <$L/log | grep -c -F -x "$n2") -ge 3 ] &&
		[ $(param name <$L/log | grep -c -F -x "$n3") -ge 1 ] &&
		[ $(param name <$L/log | grep -v -c -F -x -e "$base}" -e "$n1" -e "$n2" -e "$n3") -eq 0 ]
}
check "each push names its container (its pod, its Kubernetes names and its service), the pod's own cgroup its pod, or none" \
	group_names
check "every pushed profile is a pprof go tool pprof reads" profiles $L
# group_sums RAW: "INTERVAL ALL DROPPED COUNTED DROPS GROUP_N GROUP_M STRAY CONTAINER":
# raw_sums's, the interval, the group's note, and the samples whose
# container.id label is not the profile's container (all those with one
# in the profile of none).
group_sums() {
	n=$(sed -n 's/^Comment: hotstack interval: \([0-9]*\) of .*/\1/p' "$1")
	g=$(sed -n "s/^Comment: hotstack group: .*, \([0-9]*\) of the interval's \([0-9]*\) samples/\1 \2/p" "$1")
	c=$(sed -n 's/^Comment: hotstack group: container\.id=\([0-9a-f]*\).*/\1/p' "$1")
	stray=$(awk -v c="$c" '
		/^Samples:/ { in_s = 1; next }
		/^Locations/ { in_s = 0 }
		in_s && /^ *[0-9]+( +[0-9]+)*: / { n++; own[n] = 0; next }
		in_s && /container\.id:\[/ { if (c != "" && index($0, "container.id:[" c "]")) own[n] = 1; else bad[n] = 1 }
		END { for (i = 1; i <= n; i++) s += c != "" ? !own[i] : bad[i] + 0; print s + 0 }' "$1")
	set -- $(raw_sums "$1")
	echo "$n $1 $2 $3 $4 $g $stray ${c:-none}"
}
groups_add_up() {
	for r in $L/*.raw; do group_sums $r; done | sort -n >/tmp/gs
	cat /tmp/gs
	awk '
		{ if ($6 != $2 || $8 != 0) bad = 1
		  all[$1] += $2; dr[$1] += $3; c[$1] = $4; d[$1] = $5; m[$1] = $7 }
		END {
			for (i in all) {
				n++
				if (all[i] != m[i] || all[i] - dr[i] != c[i] || dr[i] != d[i]) bad = 1
			}
			exit bad || n < 3
		}' /tmp/gs
}
check "each group's samples are its container's alone, the group notes them, and an interval's groups add up to the session's counted and drops" \
	groups_add_up
check_output "the interval's log line says how many profiles it made" \
	'interval [0-9]+ \[[0-9]+, [0-9]+\) .* bytes in [2-4] profiles, [0-9]+ kB in use; push:' cat /tmp/ag.log
check_output "--output-dir: hotstack-START-ID.pb.gz for each container" '^[1-9][0-9]* [1-9][0-9]*$' \
	sh -c "echo \$(ls /tmp/og | grep -c -E '^hotstack-[0-9]{8}T[0-9]{6}Z-$id1\.pb\.gz$') \
		\$(ls /tmp/og | grep -c -E '^hotstack-[0-9]{8}T[0-9]{6}Z-$id2\.pb\.gz$')"
check_output "--keep 2 counts intervals: the newest two's files, more than two" '^2 [3-9]$' \
	sh -c "echo \$(ls /tmp/og | cut -c1-25 | sort -u | wc -l) \$(ls /tmp/og | wc -l)"

# ---- --push otlp+http://: OTLP/HTTP profiles ---------------------------------------------
# The request and its resource's strings here, the containers' too; the
# message itself is read field by field by an independent reader in the
# unit tests (tests/unit/otlp_check.py).
L=/tmp/lo
listen_start $L 200
hotstack agent -i 1 $RATE --group-by container --push otlp+$URL --name hsotlp \
	--log /tmp/ao.log &
agent=$!
wait_requests $L 6
agent_stop
listen_stop
# -p: the process's name is the resource's process.executable.name.
listen_start /tmp/lp 200
hotstack agent -i 1 $RATE -p $p1 --push otlp+$URL --log /tmp/ap.log &
agent=$!
wait_requests /tmp/lp 2
agent_stop
listen_stop
p_named() {
	r=$(awk 'NR == 1 { print $1 }' /tmp/lp/log)
	hs_listen -x /tmp/lp/$r.req /tmp/lp/$r.pb &&
		grep -q -a -F process.executable.name /tmp/lp/$r.pb &&
		grep -q -a -F hs_vmtest /tmp/lp/$r.pb
}
check "agent -p --push otlp+http://: the resource names the process (process.executable.name)" \
	p_named
kill $p1 $p2
wait $p1 $p2 2>/dev/null
rm -rf /var/log/containers /var/log/pods

# ---- --group-by unit: a container's unit is not the host's of the same name ---------------
mkdir -p $cg/system.slice/hsweb.service $cg/$c1/system.slice/hsweb.service
sh -c "echo \$\$ >$cg/system.slice/hsweb.service/cgroup.procs && exec hs_vmtest uspin 600000" &
p1=$!
sh -c "echo \$\$ >$cg/$c1/system.slice/hsweb.service/cgroup.procs && exec hs_vmtest uspin 600000" &
p2=$!
rm -rf /tmp/ou
hotstack agent -i 1 $RATE --group-by unit --output-dir /tmp/ou --log /tmp/au.log &
agent=$!
unit_files() {
	ls /tmp/ou 2>/dev/null | grep -q -E "^hotstack-[0-9T]+Z-hsweb\.service\.pb\.gz\$" &&
		ls /tmp/ou | grep -q -E "^hotstack-[0-9T]+Z-hsweb\.service-$id1\.pb\.gz\$"
}
wait_agent unit_files
agent_stop
kill $p1 $p2
wait $p1 $p2 2>/dev/null
check "--group-by unit: the host's hsweb.service and the container's, a file each" unit_files
unit_notes() {
	for f in /tmp/ou/*-hsweb.service*.pb.gz; do
		pprof -raw $f | sed -n 's/^Comment: hotstack group: \(.*\), [0-9]* of .*/\1/p'
	done | sort -u | tr '\n' ' '
}
check_output "their groups: the unit, the container's id with it, the unit their service" \
	"^systemd.unit=hsweb.service,container.id=$id1,service_name=hsweb.service systemd.unit=hsweb.service,service_name=hsweb.service \$" \
	unit_notes
rmdir $cg/system.slice/hsweb.service $cg/$c1/system.slice/hsweb.service $cg/$c1/system.slice
rmdir $cg/$c1 $cg/system.slice $cg/$c2 $cg/${c2%/*} $cg/${c2%/*/*} $cg/${c2%%/*}
[ -n "$mounted" ] && umount $cg
sed 's/^/# /' /tmp/ao.log
check "agent --push otlp+http:// exits 0 on SIGTERM (status $agent_rc)" [ $agent_rc -eq 0 ]
check_output "each push is a POST /v1development/profiles answered 200" '^ok$' \
	sh -c "awk '\$3 != \"POST\" || \$4 != \"/v1development/profiles\" || \$5 != 200 { bad = 1 } END { print (NR >= 3 && !bad) ? \"ok\" : \"bad \" NR }' $L/log"
otlp_bodies() {
	for r in $(awk '{ print $1 }' $L/log); do
		grep -q -i '^Content-Type: application/x-protobuf' $L/$r.req || { echo "$r: no Content-Type"; return 1; }
		hs_listen -x $L/$r.req $L/$r.pb || return 1
		for s in service.name hsotlp host.name "$(hostname)" os.version "$(uname -r)" \
			hotstack.event cpu-clock samples count; do
			grep -q -a -F "$s" $L/$r.pb || { echo "$r: no $s"; return 1; }
		done
	done
}
check "each is application/x-protobuf, its resource the service's, the host's and the kernel's" \
	otlp_bodies
# bodies_with S...: how many bodies have each of the strings S.
bodies_with() {
	n=0
	for f in $L/*.pb; do
		ok=1
		for s in "$@"; do
			grep -q -a -F "$s" $f || ok=0
		done
		n=$((n + ok))
	done
	echo $n
}
container_bodies() {
	echo $(bodies_with container.id $id1 service.name docker-$id1.scope) \
		$(bodies_with container.id $id2 k8s.pod.uid $uid service.name shop/nginx \
			k8s.namespace.name k8s.pod.name web-7d4b k8s.container.name)
}
check_output "the containers' pushes: resource container.id (and k8s.pod.uid, Kubernetes' names), its service the workload, one each or more" \
	'^[1-9][0-9]* [1-9][0-9]*$' container_bodies
check_output "the agent said it pushes OTLP, and logs each interval" \
	'started: pushing OTLP to http://127.0.0.1:4040.*interval [0-9]+ \[' sh -c "tr '\n' ' ' </tmp/ao.log"

# ---- --group-by with 500 containers and a slow server ---------------------------------
# A node's worth of containers: docker scopes, a process in each waiting
# 1 s at a time (--off-cpu: each has waits in every interval of 3 s).
# An interval is one entry of the push queue however many groups it has.
grep -q " $cg cgroup2 " /proc/mounts || { mkdir -p $cg && mount -t cgroup2 none $cg && mounted=1; }
mkdir -p $cg/system.slice
# containers_start FIRST N: hs_vmtest cgnaps's N containers ($naps), once all are in.
containers_start() {
	rm -f /tmp/cgnaps.out
	hs_vmtest cgnaps 1000 $cg/system.slice $1 $2 >/tmp/cgnaps.out &
	naps=$!
	wait_for 120 grep -q ready /tmp/cgnaps.out
}
containers_stop() {
	kill $naps
	wait $naps
}
# interval_line LOG N: the agent's line of interval N (its "in K profiles").
interval_line() {
	grep -E "interval $2 \[[0-9]+, [0-9]+\) .* in [0-9]+ profiles" "$1" | head -n 1
}
has_interval() {
	[ -n "$(interval_line "$@")" ]
}
# pyroscope_queue2 N SECONDS: the containers' agent pushing to Pyroscope
# with --queue 2 and intervals of SECONDS (its log $A=/tmp/aN.log, the
# listener's $L=/tmp/lN) until an interval's requests (interval 2's or a
# later one's) have all arrived; $line interval 2's log line, $anon the
# agent's RssAnon then.
pyroscope_queue2() {
	L=/tmp/l$1 A=/tmp/a$1.log
	listen_start $L 200
	hotstack agent -i $2 --off-cpu --group-by container --push $URL --queue 2 --log $A &
	agent=$!
	wait_for 120 has_interval $A 2
	line=$(interval_line $A 2)
	wait_for 300 interval_arrived
	anon=$(awk '/^RssAnon:/ { print $2 }' /proc/$agent/status)
	agent_stop
	listen_stop
	sed 's/^/# /' $A | grep -v 'interval [0-9]* \['
	echo "# $line"
}
# arrived: "PROFILES ARRIVED" of the first interval from 2 on whose
# requests (by their from=) all arrived, else of interval 2. A loaded VM's
# sender may fall behind and the queue drop interval 2 whole (checked
# below): a later interval then shows the same. One awk over the two logs:
# wait_for tries it ten times a second.
arrived() {
	awk -v L=$L/log '
		FILENAME == L { if (match($4, /[?&]from=[0-9]+/)) got[substr($4, RSTART + 6, RLENGTH - 6)]++; next }
		/interval [0-9]+ \[[0-9]+, [0-9]+\) .* in [0-9]+ profiles/ {
			n = $0; sub(/.*interval /, "", n); sub(/ .*/, "", n)
			f = $0; sub(/.*interval [0-9]+ \[/, "", f); sub(/,.*/, "", f)
			k = match($0, / in [0-9]+ profiles/) ? substr($0, RSTART + 4, RLENGTH - 13) : 0
			if (n + 0 < 2) next
			if (first == "") first = k " " (got[f] + 0)
			if (k + 0 > 0 && got[f] >= k + 0) { print k, got[f]; done = 1; exit }
		}
		END { if (!done) print (first == "" ? "0 0" : first) }' $L/log $A 2>/dev/null
}
interval_arrived() {
	set -- $(arrived)
	[ $1 -gt 0 ] && [ $2 -ge $1 ]
}
# Pyroscope: one request a group, 51 an interval, with --queue 2: every
# one of an interval's requests arrives, none is dropped (a queue of
# profiles would have dropped 49 of 51 each interval).
containers_start 1 50
check "50 processes, each in its container's cgroup" [ $(cat $cg/system.slice/docker-*.scope/cgroup.procs | wc -l) -eq 50 ]
pyroscope_queue2 50 3
anon50=$anon
containers_stop
check_output "Pyroscope, 50 containers, --queue 2: an interval's profiles (one each, and the host's) all arrived" \
	'^51 51$' arrived
check_output "none dropped for room (the queue counts intervals)" '^0$' \
	sh -c "grep -c 'dropped the oldest' /tmp/a50.log"
# OTLP: 500 containers, a server taking 0.5 s an answer, one request an
# interval holding every group.
containers_start 1001 500
check "500 processes, each in its container's cgroup" [ $(cat $cg/system.slice/docker-*.scope/cgroup.procs | wc -l) -eq 500 ]
L=/tmp/lo500
listen_start $L 200 500
hotstack agent -i 3 --off-cpu --group-by container --push otlp+$URL --log /tmp/ao500.log &
agent=$!
wait_for 120 has_interval /tmp/ao500.log 3
wait_requests $L 3
# Its memory after three intervals: its peak (the table's mapping, some
# 10 MB, in it) at most 50 MB. It was 450 MB when an interval's groups
# grew their array one at a time (glibc then kept every copy's pages).
mem=$(awk '/^(VmHWM|VmRSS|RssAnon|RssFile|RssShmem):/ { printf "%s %s kB, ", $1, $2 }' /proc/$agent/status)
hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$agent/status)
agent_stop
listen_stop
sed 's/^/# /' /tmp/ao500.log | grep -v 'interval [0-9]* \['
interval_line /tmp/ao500.log 3 | sed 's/^/# /'
echo "# the agent's memory: $mem; with 50 containers: RssAnon: $anon50 kB"
check "OTLP, 500 containers: the agent's peak memory at most 50 MB (VmHWM $hwm kB)" \
	[ "$hwm" -le 51200 ]
# containers REQ: the distinct container ids in request REQ's body.
containers() {
	hs_listen -x $L/$1.req $L/$1.pb && grep -a -o -E 'docker-[0-9a-f]{64}' $L/$1.pb | sort -u | wc -l
}
otlp_500() {
	pushed=$(sed -n 's/.*stopped: \([0-9]*\) intervals.* pushed \([0-9]*\),.*/\1 \2/p' /tmp/ao500.log)
	most=0
	for r in $(awk '$5 == 200 { print $1 }' $L/log); do
		n=$(containers $r)
		[ $n -gt $most ] && most=$n
	done
	set -- $pushed
	echo "intervals $1, pushed $2, requests $(requests $L 200), most containers in one $most"
	[ -n "$1" ] && [ "$1" = "$2" ] && [ "$1" = $(requests $L 200) ] && [ $most -eq 500 ]
}
check "OTLP, 500 containers: one request an interval, one holding all 500" otlp_500
# Pyroscope, the same 500: an interval's 501 requests, queued as one entry, all arrive.
pyroscope_queue2 500 5
containers_stop
check_output "Pyroscope, 500 containers, --queue 2: an interval's 501 profiles all arrived" \
	'^501 501$' arrived
# Its sender may fall behind in a loaded VM (501 requests in 5 s): then
# the queue drops the oldest intervals, each whole, none part-sent.
check_output "what the queue dropped, it dropped whole intervals (all their requests left)" \
	'^0$' sh -c "grep 'dropped the oldest' /tmp/a500.log | grep -v -c 'all its requests left'"

# ---- a day of intervals, compressed: its memory flat ------------------------------------
# One-second intervals while containers come and go (a new one every
# quarter of a second or so, each living 200 ms: hundreds over the
# soak): what the agent keeps (the cgroups' names, the groups, the
# directory's files) holds what is there now, not what ever was: its
# memory in use (its log's "kB in use", glibc's count) after 60 intervals
# no more than 512 kB above that after 20. Not its resident memory: a
# heap's pages kept after one interval's peak (4.0 to 6.3 MB from 20 to
# 60 once, on a loaded host) hid a leak of 30 kB an interval for 60
# intervals (RssAnon 6848 kB from interval 20 to 80).
rm -f /tmp/soak.stop
(
	i=0
	while [ ! -e /tmp/soak.stop ]; do
		i=$((i + 1))
		d=$cg/system.slice/docker-$(printf '%064x' $((7000 + i))).scope
		mkdir $d && sh -c "echo \$\$ >$d/cgroup.procs && exec hs_vmtest nap 200 /dev/null"
		rmdir $d
	done
	echo $i >/tmp/soak.stop
) &
churn=$!
rm -rf /tmp/osoak
hotstack agent -i 1 --off-cpu --group-by container --output-dir /tmp/osoak --keep 3 \
	--log /tmp/asoak.log &
agent=$!
wait_for 120 has_interval /tmp/asoak.log 20
anon20=$(awk '/^RssAnon:/ { print $2 }' /proc/$agent/status)
cpu20=$(awk '{ print $14 + $15 }' /proc/$agent/stat)
wait_for 120 has_interval /tmp/asoak.log 40
anon40=$(awk '/^RssAnon:/ { print $2 }' /proc/$agent/status)
wait_for 120 has_interval /tmp/asoak.log 60
anon60=$(awk '/^RssAnon:/ { print $2 }' /proc/$agent/status)
cpu60=$(awk '{ print $14 + $15 }' /proc/$agent/stat)
agent_stop
: >/tmp/soak.stop
wait $churn
sed 's/^/# /' /tmp/asoak.log | grep -v 'interval [0-9]* \['
echo "# containers made and removed: $(cat /tmp/soak.stop); RssAnon after 20 intervals $anon20 kB, after 40 $anon40 kB, after 60 $anon60 kB"
# Its CPU, for the record: under QEMU's TCG (no KVM here) a guest's
# instructions cost tens of times a machine's, so no bound is checked.
echo "# the agent's CPU over intervals 20-60: $(( (cpu60 - cpu20) / 40 ))% of a CPU (TCG; ticks of 1/100 s over 40 s)"
# in_use N: interval N's "kB in use".
in_use() {
	sed -n "s/.*interval $1 \[.* \([0-9]*\) kB in use.*/\1/p" /tmp/asoak.log
}
soak_flat() {
	[ -n "$use20" ] && [ -n "$use60" ] && [ "$use60" -le $((use20 + 512)) ]
}
use20=$(in_use 20) use40=$(in_use 40) use60=$(in_use 60)
check "60 one-second intervals, $(cat /tmp/soak.stop) containers come and gone: the agent's memory flat ($use20 kB in use after 20, $use40 kB after 40, $use60 kB after 60)" \
	soak_flat
check_output "--keep 3: the newest 3 intervals' files" '^3$' \
	sh -c "ls /tmp/osoak | cut -c1-25 | sort -u | wc -l"

# ---- in a cgroup namespace of its own ---------------------------------------------------
# As a container on cgroup v2 runs it (Kubernetes' and docker's default):
# its /sys/fs/cgroup shows its own subtree alone. The containers beside
# it are named from the first process's tree (/proc/1/root).
d=$cg/system.slice/docker-$id1.scope
mkdir -p $d $cg/hsagent
sh -c "echo \$\$ >$d/cgroup.procs && exec hs_vmtest naps 100" &
napper=$!
rm -rf /tmp/ons
sh -c "echo \$\$ >$cg/hsagent/cgroup.procs && exec hs_vmtest cgns hotstack agent -i 1 \
	--off-cpu --group-by container --output-dir /tmp/ons --log /tmp/ans.log" &
agent=$!
ns_named() {
	ls /tmp/ons 2>/dev/null | grep -q -- "-$id1\.pb\.gz\$"
}
wait_for 120 ns_named
# What its /sys/fs/cgroup shows: a cgroup2 tree without the machine's slices.
own_tree=no
[ -e /proc/$agent/root/sys/fs/cgroup/cgroup.procs ] &&
	[ ! -e /proc/$agent/root/sys/fs/cgroup/system.slice ] && own_tree=yes
agent_stop
kill $napper
wait $napper 2>/dev/null
sed 's/^/# /' /tmp/ans.log | grep -v 'interval [0-9]* \['
check "in a cgroup namespace of its own, the agent names a container outside it (its profile hotstack-START-ID.pb.gz)" \
	ns_named
check "the agent's /sys/fs/cgroup there showed its own subtree alone" [ $own_tree = yes ]
rmdir $d $cg/hsagent
rmdir $cg/system.slice 2>/dev/null
[ -n "$mounted" ] && umount $cg
rmmod hs_workload
rmmod hotstack
