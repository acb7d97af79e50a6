# SPDX-License-Identifier: GPL-2.0
# hotstack top: the live view in batch mode (plain text), full screen on a
# pseudo-terminal, and its errors.
. /tests/lib.sh

check_output "top without the module says it is not loaded (as record does)" \
	"module is not loaded" hotstack top -b -n 1
check "insmod hotstack.ko" reload
check "insmod hs_workload.ko" insmod /tests/hs_workload.ko

# The function rows of every frame in FILE.
top_rows() {
	awk '/^   %SELF / { t = 1; next } t && NF == 0 { t = 0 } t { print }' "$1"
}

workload_start "6 4 3000"
hotstack top -b -n 2 -d 1 -e "$HS_EVENT" $HS_RATE >/tmp/top.out 2>/tmp/top.err
check "top -b -n 2 -d 1 while the workload runs" [ $? -eq 0 ]
workload_stop
cat /tmp/top.err >>/tmp/top.out
# The first refresh, for the log.
awk 'NF == 0 { b++ } b < 3 { print "#   " $0 }' /tmp/top.out | head -30
check_output "two refreshes, each with the event and the rate" '^2$' \
	sh -c "grep -c -E '^hotstack top - $HS_EVENT, ([0-9]+ Hz|period [0-9]+), [0-9]+ CPUs?, up [0-9.]+ s, sorted by self$' /tmp/top.out"
check_output "the header has samples/s, the interval, drops and filtered-out samples" \
	'^samples: [1-9][0-9]* samples/s \([0-9]+ in [0-9.]+ s\), counted [0-9]+, dropped [0-9]+.*, filtered out [0-9]+, [0-9]+ in NMI$' \
	cat /tmp/top.out
[ "$HS_EVENT" = cycles ] &&
	check "every sample of each interval was taken in NMI context" all_in_nmi /tmp/top.out
check_output "the header has distinct stacks, the store's fill and the fullest CPU's counts" \
	"^stacks: [1-9][0-9]* distinct, store [0-9]+% full \\([0-9]+ of [0-9]+\\), CPU [0-9]+'s counts [0-9]+% full$" \
	cat /tmp/top.out
check_output "the header has the cost per sample and the overhead" \
	'^cost: [1-9][0-9]* ns/sample, overhead [0-9.]+% CPU$' cat /tmp/top.out
check_output "as root the stacks come from the mmap, named by the tool" \
	'^stacks from: the mmap, named from /proc/kallsyms$' cat /tmp/top.out
check_output "hs_leaf is among the hottest functions" \
	'^ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9]+  hs_leaf \[hs_workload\]$' top_rows /tmp/top.out
check "the function rows are sorted by self, most first" sh -c "
	awk '/^   %SELF / { t = 1; last = 101; next } t && NF == 0 { t = 0 }
	     t { v = \$1 + 0; if (v > last) bad = 1; last = v; rows++ } END { exit bad || !rows }' /tmp/top.out"
# hs_leaf is not always innermost: an interrupt, or on the debug kernels
# the clock it reads with its lockdep checks, can be inside it.
check_output "the hottest stacks show the workload's, innermost first" \
	'^ +[0-9.]+% +[0-9]+  (.* <- )?hs_leaf \[hs_workload\] <- .*hs_rec_[ab] \[hs_workload\] <- hs_workload_write \[hs_workload\] <- ' \
	cat /tmp/top.out

# --sort total with -p: only the workload's process, whose write is on
# (nearly) every one of its stacks; only its tasks are sampled.
workload_start "6 4 2000"
hotstack top -b -n 1 -d 1 --sort total -p $work -e "$HS_EVENT" $HS_RATE >/tmp/topt.out 2>&1
check "top -b --sort total -p PID" [ $? -eq 0 ]
workload_stop
check_output "the header says how it is sorted" 'sorted by total$' cat /tmp/topt.out
check_output "nothing filtered out: events on the process's tasks only" \
	'^samples: [1-9].*, filtered out 0, [0-9]+ in NMI$' cat /tmp/topt.out
check_output "hs_workload_write is on most of the process's stacks (over 50%)" \
	'^ +[0-9.]+% +([5-9][0-9]|100)\.[0-9]+% +[0-9]+ +[0-9]+  hs_workload_write \[hs_workload\]$' \
	cat /tmp/topt.out
check "the function rows are sorted by total, most first" sh -c "
	awk '/^   %SELF / { t = 1; last = 101; next } t && NF == 0 { t = 0 }
	     t { v = \$2 + 0; if (v > last) bad = 1; last = v; rows++ } END { exit bad || !rows }' /tmp/topt.out"
check_output "no idle loop (another process's)" '^0$' sh -c 'grep -c do_idle /tmp/topt.out'

# SIGTERM ends it cleanly (exit 0), after what it had printed.
hotstack top -b -d 0.5 -e "$HS_EVENT" $HS_RATE >/tmp/tops.out 2>&1 &
top=$!
wait_output /tmp/tops.out '^stacks: '
kill -TERM $top
wait $top
check "SIGTERM ends top -b with status 0" [ $? -eq 0 ]
check_output "after at least one refresh" '^stacks: [0-9]+ distinct' cat /tmp/tops.out
check "and its session is gone" \
	sh -c 'hotstack status >/tmp/st.out && ! grep -q running /tmp/st.out'

# kptr_restrict=2: top says why, as record does, and uses read()'s text.
old=$(cat /proc/sys/kernel/kptr_restrict)
echo 2 >/proc/sys/kernel/kptr_restrict
workload_start "6 4 4000"
hotstack top -b -n 1 -d 1 -e "$HS_EVENT" $HS_RATE >/tmp/topk.out 2>&1
check "top with kptr_restrict=2 succeeds" [ $? -eq 0 ]
workload_stop
echo "$old" >/proc/sys/kernel/kptr_restrict
check_output "and says why it does not symbolize, and what to do" \
	'kernel addresses are hidden \(kernel.kptr_restrict\).*CAP_SYSLOG.*sysctl kernel.kptr_restrict=0' \
	cat /tmp/topk.out
check_output "the header says the stacks come from read()" \
	'^stacks from: read\(\) text, symbolized in the kernel \(kernel addresses hidden' \
	cat /tmp/topk.out
check_output "read()'s symbolized text shows hs_leaf" \
	'hs_leaf \[hs_workload\]' cat /tmp/topk.out

# Full screen, live: hs_vmtest pty runs top on a 100x40 vt100 pseudo-
# terminal, types keys and prints the screen after each (see tests/vm/vmtest/pty.c).
pty_ready
# Screen N of hs_vmtest pty's output in FILE: screen N FILE.
screen() {
	awk -v n="$1:" '$1 == "---" && $2 == "screen" { s = $3; next } s == n' "$2"
}
# Stacks of 200 ms: the workload gives its CPU up between two
# (on a kernel without preemption, top's start can wait for that).
workload_start "6 64 200"
hs_vmtest pty 3 tq /tmp/topf.raw -- hotstack top -d 1 -e "$HS_EVENT" $HS_RATE >/tmp/topf.out 2>&1
check "full screen top on a terminal, keys t then q: status 0" [ $? -eq 0 ]
workload_stop
sed -n '/^--- screen 0:/,/^--- screen 1:/p' /tmp/topf.out | sed -e '/^$/d' -e 's/^/#   /' | head -30
screen 0 /tmp/topf.out >/tmp/topf.0
screen 1 /tmp/topf.out >/tmp/topf.1
check_output "3 s in, the screen shows the header, sorted by self" \
	"^hotstack top - $HS_EVENT, ([0-9]+ Hz|period [0-9]+), [0-9]+ CPUs?, up [0-9.]+ s, sorted by self\$" \
	cat /tmp/topf.0
check_output "and ncurses took the terminal (no canonical mode, no echo)" \
	'^--- screen 0: 3 s after its first output, tty -icanon -echo$' cat /tmp/topf.out
check_output "hs_leaf is among the hottest functions on the screen" \
	'^ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9]+  hs_leaf \[hs_workload\]$' top_rows /tmp/topf.0
check_output "and the hottest stacks' title" \
	'^  %STACK +SAMPLES  STACK \(innermost first\)$' cat /tmp/topf.0
check_output "the key help on the last of the pty's 40 rows" \
	'^40 q quit  s/t sort by self/total  r refresh  every 1\.0 s$' \
	sh -c "awk 'END { print NR \$0 }' /tmp/topf.0"
check_output "after t the header says sorted by total" \
	"^hotstack top - $HS_EVENT, .*, sorted by total\$" cat /tmp/topf.1
check "and the function rows are sorted by total, most first" sh -c "
	grep -q '^   %SELF ' /tmp/topf.1 &&
	awk '/^   %SELF / { t = 1; last = 101; next } t && NF == 0 { t = 0 }
	     t { v = \$2 + 0; if (v > last) bad = 1; last = v; rows++ } END { exit bad || !rows }' /tmp/topf.1"
check_output "after q ncurses gave the terminal back (canonical mode, echo)" \
	'^--- screen 3: at the exit, status 0, tty icanon echo$' cat /tmp/topf.out
check "and its session is gone" \
	sh -c 'hotstack status >/tmp/st.out && ! grep -q running /tmp/st.out'

# Ctrl-C on the terminal: its line discipline sends top SIGINT.
hs_vmtest pty 2 '^C' /tmp/topi.raw -- hotstack top -d 1 -e "$HS_EVENT" $HS_RATE >/tmp/topi.out 2>&1
check "Ctrl-C ends full screen top with status 0" [ $? -eq 0 ]
check_output "after the screen had shown the header" '^hotstack top - ' screen 0 /tmp/topi.out
check_output "then ncurses gave the terminal back (canonical mode, echo)" \
	'^--- screen 2: at the exit, status 0, tty icanon echo$' cat /tmp/topi.out
# endwin's last words on a vt100: the keypad back from application mode
# (rmkx; keypad() had sent smkx).
check_output "and the last it wrote put the keypad back in normal mode (vt100 rmkx)" \
	'\\E\[\?1l\\E>$' tail -n 1 /tmp/topi.raw
check_output "which it had put in application mode (smkx)" '\\E\[\?1h\\E=' cat /tmp/topi.raw
check "and its session is gone" \
	sh -c 'hotstack status >/tmp/st.out && ! grep -q running /tmp/st.out'

# --off-cpu: the interval's waits in ms, a shell's and its children's.
if grep -q ' __tracepoint_sched_switch$' /proc/kallsyms; then
	sh -c 'while :; do sleep 0.2; done' &
	sl=$!
	hotstack top --off-cpu -b -n 2 -d 1 --sort total -p $sl >/tmp/topo.out 2>&1
	check "top --off-cpu -b -n 2 -p PID: status 0" [ $? -eq 0 ]
	kill $sl
	wait $sl 2>/dev/null
	sed -e '/^$/d' -e 's/^/#   /' /tmp/topo.out | head -16
	check_output "its header says off-CPU, every switch" \
		'^hotstack top - off-cpu, every switch, [0-9]+ CPUs?, up ' cat /tmp/topo.out
	# One untimed at most: the shell's wait in progress at START can end
	# while START makes its record (its end not seen; trixie-generic,
	# once, on a loaded host), or read a clock behind its start.
	check_output "and gives the waits that ended in the interval, in s" \
		'^off-CPU: [0-9.]+ s of waits ended in [0-9.]+ s \([0-9]+ switches, [01] untimed\), counted [0-9.]+ s, dropped 0\.000 s' \
		cat /tmp/topo.out
	check_output "its children's sleeps: hrtimer_nanosleep's time in ms" \
		'^ +[0-9.]+% +[0-9.]+% +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}  hrtimer_nanosleep$' \
		cat /tmp/topo.out
	check_output "the stacks' counts are ms too" '^  %STACK +ms  STACK \(innermost first\)$' \
		cat /tmp/topo.out
else
	check_output "top --off-cpu on a kernel without tracepoints says why" \
		"needs the kernel's sched_switch tracepoint" hotstack top --off-cpu -b -n 1
fi

# Errors: full screen needs a terminal; bad flags exit 2 with the reason.
hotstack top </dev/null >/tmp/tope.out 2>&1
check "top without -b, not on a terminal, exits 2" [ $? -eq 2 ]
check_output "and says to use -b" \
	'hotstack top: standard output is not a terminal: use -b' cat /tmp/tope.out
hotstack top -b --bogus >/tmp/tope.out 2>&1
check "top with a bad flag exits 2" [ $? -eq 2 ]
check_output "and names it, with the usage" "unknown option '--bogus'" cat /tmp/tope.out
hotstack top -b -d 0 >/tmp/tope.out 2>&1
check "top -d 0 exits 2" [ $? -eq 2 ]
check_output "and says what -d wants" "-d wants the seconds between refreshes" cat /tmp/tope.out
hotstack top -b -n 1 -e instructions -F 1000 >/tmp/tope.out 2>&1
check_output "an event the machine cannot count: record's message" \
	'hotstack top: event instructions is not supported on this machine' cat /tmp/tope.out

check "rmmod hs_workload" rmmod hs_workload
check "rmmod hotstack" rmmod hotstack
