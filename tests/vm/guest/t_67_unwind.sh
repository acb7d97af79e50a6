# SPDX-License-Identifier: GPL-2.0
# User stacks of programs built without frame pointers, walked by the unwind
# tables hotstack record makes from each binary's .eh_frame (--call-graph
# dwarf, the default), as users run it:
#   - uw_tree (tests/vm/uw_tree.c), a program whose call tree is known: built
#     without frame pointers, every stack it runs is recorded exactly,
#     outermost frame (_start) to the leaf, through libc's start code, a
#     4 KiB frame, a libc function and a signal handler; deep recursion to
#     the depth asked for; the frame-pointer build gives the same stacks;
#   - Debian's own programs, unchanged (stripped, no frame pointers) at their
#     Debian paths (tests/vm/run.sh, HOTSTACK_VM_DEBIAN): xz (its work in
#     liblzma), sha256sum (coreutils), and where the guest has it python3 on
#     a script: at least 95% of their samples' user stacks reach
#     __libc_start_main, through the program's own code;
#   - the whole system (-a), and frame pointers only (--call-graph fp) for
#     what it gives without tables.
# Busybox's xz and sha256sum applets are /bin's: Debian's are called by
# their full paths.
. /tests/lib.sh

check "insmod hotstack.ko" reload

# share FILE ERE: the share (%, one decimal) of a folded FILE's samples
# whose line matches ERE, then their number and the total: of the
# program's samples. Not the program's: the dynamic loader's before it
# (their outermost frame ld.so's) and the exec's (a lone [unknown]: the
# user registers still the old image's, at its execve call), a fixed work
# each that weighs more the slower the kernel (on a debug kernel, the
# host loaded: 40% of a 1 s run), then their number.
# share FILE ERE [WORK]: the same of the samples whose line matches the
# ERE WORK (a leaf: the program's work, not its setup nor its clock reads,
# which also weigh more the slower the kernel).
share() {
	# The EREs through the environment: awk -v would take their backslashes.
	ERE=$2 WORK=${3:-.} awk '{ n = $NF }
		/^ld-linux/ || /^\[unknown\] [0-9]+$/ || $0 !~ ENVIRON["WORK"] { x += n; next }
		{ t += n; if ($0 ~ ENVIRON["ERE"]) m += n }
		END { printf "%.1f %d %d %d\n", t ? 100 * m / t : 0, m, t, x }' "$1"
}
# at_least FILE ERE PCT [WORK]: share() is PCT or more (and there are
# samples); else the largest stacks that do not match are shown.
at_least() {
	file=$1 ere=$2 work=${4:-.}
	set -- $(share "$1" "$2" "$work") "$3"
	echo "# $2 of the program's $3 samples ($1%; $4 others)"
	[ "$3" -gt 0 ] && awk -v a="$1" -v b="$5" 'BEGIN { exit !(a >= b) }' && return
	ERE=$ere awk '$0 !~ ENVIRON["ERE"]' "$file" | sort -t' ' -k2 -n -r | head -n 5 |
		sed 's/^/# not: /'
	return 1
}

# after_main FILE: the stacks of a folded FILE from main on (the frames
# above it are libc's start code, checked apart), with their counts.
after_main() {
	sed -n 's/^.*;\(main;.*\)$/\1/p' "$1"
}

# --- uw_tree: every stack exactly -------------------------------------------
# Leaves: spin (no frame of its own), frame (4 KiB of stack), libc (getppid
# through libc: the innermost frame is libc's), sys (its own system call:
# kernel-mode samples with this user stack under them).
args="2 6 4 spin,frame,libc,sys"
uw_tree_nofp --expect $args >/tmp/uw-expect
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/uw.folded -- uw_tree_nofp $args \
	>/tmp/uw.out 2>&1
check "record --stacks user -- uw_tree_nofp (no frame pointers)" [ $? -eq 0 ]
grep '^\[ hotstack' /tmp/uw.out | sed 's/^/# /'
# The frames above main: _start, libc's __libc_start_main and the start
# code it calls (__libc_start_call_main, unnamed in a stripped libc).
# early_walks OUT: the walks before their process's tables record's summary
# (OUT) counts, 0 if it says none.
early_walks() {
	sed -n "s/.* \([0-9]*\) walks before their process's tables.*/\1/p" "$1" | grep . ||
		echo 0
}
# reach_start FOLDED OUT: 99% of main's stacks reach them. A walk made
# before the process's tables were all loaded (libc mapped after the tool
# first read the process, its table built after: a debug guest, the host
# loaded: 23 of 1776) stops at libc's start code, reached by tables from
# main but without a rule of its own: such stacks are left out of the
# share, as many as record's summary (OUT) counts walks before their
# process's tables (as expected() below). A libc rule gone wrong stops
# them all.
reach_start() {
	early=$(early_walks "$2")
	partial=$(awk '/^libc\.so\.6\+0x[0-9a-f]+;main;/ { n += $NF } END { print n + 0 }' "$1")
	echo "# $partial stacks stop at libc's start code ($early walks before their" \
		"process's tables)"
	if [ "$partial" -le "$early" ]; then
		grep -v -E '^libc\.so\.6\+0x[0-9a-f]+;main;' "$1" >"$1.whole"
	else
		cp "$1" "$1.whole"
	fi
	at_least "$1.whole" \
		'^_start;__libc_start_main;(__libc_start_call_main|libc\.so\.6\+0x[0-9a-f]+);main;' 99
}
grep 'main;uw_run' /tmp/uw.folded >/tmp/uw-main.folded
check "99% of its user stacks of main reach _start through __libc_start_main" \
	reach_start /tmp/uw-main.folded /tmp/uw.out
# Each expected stack, and nothing but them or a frame above the leaf (a
# sample between calls), or uw_run's clock read, or main's setup before
# uw_run (its arguments read: strtok_r, strtod). A walk before the
# process's tables were loaded goes by frame pointers, and loses a leaf's
# caller where the leaf makes no frame (libc's getppid, a PLT stub): as
# many others as record's summary counts such walks (its OUT, $2) are
# those (a debug guest, the host loaded: 20 of 1837, 47 walks so).
expected() {
	early=$(early_walks "$2")
	after_main "$1" | awk -v early="$early" '
		NR == FNR { want[$0] = 1; for (s = $0; sub(/;[^;]*$/, "", s); ) part[s] = 1; next }
		{ n = $NF; $NF = ""; sub(/ $/, ""); total += n
		  if ($0 in want) { seen[$0] += n; exact += n }
		  else if ($0 in part) above += n
		  else if ($0 ~ /^main;uw_run;(clock_gettime|__vdso_clock_gettime|__kernel_clock_gettime)/ ||
			   $0 !~ /^main;uw_run/) aside += n
		  else { bad += n; print "# unexpected: " $0 " " n } }
		END {
			for (s in want) if (!seen[s]) { missing++; print "# missing: " s }
			printf "# %d samples from main: %d in the expected stacks, %d above a leaf, " \
				"%d in the clock or before uw_run, %d others (%d walks before their " \
				"process'"'"'s tables)\n", total, exact, above, aside, bad, early
			bad = bad > early ? bad - early : 0
			# The clock and the setup aside: a system call each, they
			# weigh more the slower the kernel (a debug kernel, a
			# loaded host); as do the frames above a leaf, a sample
			# between calls (a leaf lost by the walk is missing).
			walked = total - aside
			exit !(walked && !missing && bad * 100 <= walked && exact * 100 >= 80 * walked)
		}' /tmp/uw-expect -
}
check "every stack uw_tree runs is recorded (80% of its samples but the clock's), nothing else (1% at most)" \
	expected /tmp/uw.folded /tmp/uw.out
check_output "record's summary says how the user walks went" \
	'user stacks: [0-9]+ walked, [0-9.]+% to their outermost frame; frames by unwind tables [1-9][0-9]*' \
	cat /tmp/uw.out

# The frame-pointer build, walked by its tables too: the same stacks.
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/uwfp.folded -- uw_tree_fp $args \
	>/tmp/uwfp.out 2>&1
check "record --stacks user -- uw_tree_fp (frame pointers)" [ $? -eq 0 ]
check "uw_tree_fp: the same stacks, every one, nothing else" expected /tmp/uwfp.folded /tmp/uwfp.out
# Frame pointers alone (--call-graph fp) on the frame-pointer build: the
# same stacks again (a leaf that makes no frame loses its caller there).
hotstack record -e $HS_EVENT $HS_RATE --stacks user --call-graph fp -o /tmp/uwfp2.folded -- \
	uw_tree_fp 2 6 4 frame >/tmp/uwfp2.out 2>&1
check "record --call-graph fp -- uw_tree_fp: frame pointers alone reach main too" \
	at_least /tmp/uwfp2.folded ';main;uw_run;uw_rec_[ab];(uw_rec_[ab];){5}uw_leaf_frame [0-9]+$' 90 \
	'(^|;)uw_leaf_frame [0-9]+$'
check_output "and without tables its summary has no unwind tables' line" '^0$' \
	sh -c 'grep -c "unwind tables" /tmp/uwfp2.out'
# Without frame pointers nor tables, the stacks stop at once: what the
# tables are for.
hotstack record -e $HS_EVENT $HS_RATE --stacks user --call-graph fp -o /tmp/uwnofp.folded -- \
	uw_tree_nofp 1 6 1 spin >/tmp/uwnofp.out 2>&1
check "record --call-graph fp -- uw_tree_nofp: no stack reaches main (no frame pointers)" \
	sh -c '[ -s /tmp/uwnofp.folded ] && ! grep -q ";main;uw_run;uw_rec" /tmp/uwnofp.folded'

# Deep recursion: 200 levels walked whole, under the default --max-depth 127
# cut and marked, and whole with --max-depth 1024.
hotstack record -e $HS_EVENT $HS_RATE --stacks user --max-depth 1024 -o /tmp/uwdeep.folded -- \
	uw_tree_nofp 1 200 1 spin >/dev/null 2>&1
check "a recursion 200 deep is walked whole, from _start to the leaf" \
	at_least /tmp/uwdeep.folded '^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_a;){200}uw_leaf_spin [0-9]+$' 80 \
	'(^|;)uw_leaf_spin [0-9]+$'
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/uwcut.folded -- \
	uw_tree_nofp 1 200 1 spin >/dev/null 2>&1
check "and cut at --max-depth 127, its innermost frames kept, marked [truncated]" \
	at_least /tmp/uwcut.folded '^\[truncated\];(uw_rec_a;){126}uw_leaf_spin [0-9]+$' 80 \
	'(^|;)uw_leaf_spin [0-9]+$'

# A signal handler: the walk goes through the signal frame the kernel
# made, to the code it interrupted and its callers.
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/uwsig.folded -- \
	uw_tree_nofp 1 3 2 signal >/tmp/uwsig.out 2>&1
grep ';uw_on_signal;' /tmp/uwsig.folded >/tmp/uwsig-h.folded
check "the handler's stacks go through the signal frame to the code it interrupted, to _start" \
	at_least /tmp/uwsig-h.folded '^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_[ab];){3}uw_leaf_signal;[^;]+;uw_on_signal;uw_leaf_spin [0-9]+$' 90

# --- symbols of a stripped binary -----------------------------------------
# uw_tree_stripped: uw_tree_nofp stripped of every symbol, its own in
# /tests/uw_tree_stripped.debug (a separate debug file, as Debian's -dbgsym
# packages hold them). Its frames are its binary and offsets; with the
# debug file where elfutils looks (/usr/lib/debug/.build-id/xx/rest.debug),
# or from a debuginfod server (DEBUGINFOD_URLS), their names.
bid=$(od -An -tx1 -v /bin/uw_tree_stripped | tr -d ' \n' |
	sed -n 's/.*040000001400000003000000474e5500\([0-9a-f]\{40\}\).*/\1/p')
stripped() {
	hotstack record -e $HS_EVENT $HS_RATE --stacks user -o "$1" -- uw_tree_stripped 1 3 2 spin \
		>/dev/null 2>&1
}
named='^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_[ab];){3}uw_leaf_spin [0-9]+$'
stripped /tmp/st.folded
check "a stripped binary's frames are its binary and offsets (uw_tree_stripped+0x...)" \
	at_least /tmp/st.folded '^uw_tree_stripped\+0x[0-9a-f]+;__libc_start_main;[^;]+;(uw_tree_stripped\+0x[0-9a-f]+;){5}uw_tree_stripped\+0x[0-9a-f]+ [0-9]+$' 80 \
	'(^|;)uw_tree_stripped\+0x[0-9a-f]+ [0-9]+$'
mkdir -p "/usr/lib/debug/.build-id/${bid%${bid#??}}"
cp /tests/uw_tree_stripped.debug "/usr/lib/debug/.build-id/${bid%${bid#??}}/${bid#??}.debug"
stripped /tmp/st.folded
check "with its separate debug file in /usr/lib/debug/.build-id: named" \
	at_least /tmp/st.folded "$named" 80 '(^|;)uw_leaf_spin [0-9]+$'
rm -rf /usr/lib/debug
case " $HOTSTACK_DEBIAN " in
*" debuginfod "*)
	ip link set lo up
	mkdir -p /tmp/dbgsrv
	cp /tests/uw_tree_stripped.debug /tmp/dbgsrv/
	/usr/bin/debuginfod -p 8002 -F /tmp/dbgsrv -d /tmp/dbgsrv.sqlite >/tmp/dbgsrv.log 2>&1 &
	dbgsrv=$!
	check "debuginfod serves the debug file on 127.0.0.1:8002 (by its build ID)" wait_until \
		sh -c "wget -q -O /dev/null http://127.0.0.1:8002/buildid/$bid/debuginfo"
	DEBUGINFOD_URLS=http://127.0.0.1:8002 stripped /tmp/st.folded
	check "with DEBUGINFOD_URLS naming it: named" at_least /tmp/st.folded "$named" 80 \
		'(^|;)uw_leaf_spin [0-9]+$'
	rm -rf /.cache/debuginfod_client
	stripped /tmp/st.folded
	check "without the variable: offsets again (no server asked)" \
		sh -c '! grep -q uw_rec_ /tmp/st.folded && grep -q "uw_tree_stripped+0x" /tmp/st.folded'
	kill $dbgsrv
	wait $dbgsrv 2>/dev/null
	rm -rf /tmp/dbgsrv /tmp/dbgsrv.sqlite* /.cache/debuginfod_client
	;;
esac

# --- JIT code ----------------------------------------------------------------
# uw_tree's jit leaf runs code of an anonymous mapping that its
# /tmp/perf-PID.map names uw_jit_spin (perf's format): its frames are named
# so (no binary, no table covers it).
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/jit.folded -- uw_tree_nofp 1 3 1 jit \
	>/dev/null 2>&1
check "JIT code is named from the process's /tmp/perf-PID.map" \
	at_least /tmp/jit.folded '(^|;)uw_jit_spin [0-9]+$' 80 '(^|;)(uw_jit_spin|\[unknown\]) [0-9]+$'
rm -f /tmp/perf-*.map

# --- Debian's own programs ------------------------------------------------
case $HOTSTACK_ARCH in
arm64) triplet=aarch64-linux-gnu ;;
*) triplet=x86_64-linux-gnu ;;
esac
seq 1 400000 >/tmp/uw-in.txt
cat /tmp/uw-in.txt /tmp/uw-in.txt /tmp/uw-in.txt /tmp/uw-in.txt >/tmp/uw-in4.txt
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/xz.folded -- \
	/usr/bin/xz -T1 -1 -c /tmp/uw-in.txt >/tmp/xz.out 2>/tmp/xz.err
check "record --stacks user -- /usr/bin/xz (Debian's, stripped, no frame pointers)" \
	sh -c '[ -s /tmp/xz.out ] && grep -q "wrote /tmp/xz.folded" /tmp/xz.err'
grep '^\[ hotstack' /tmp/xz.err | sed 's/^/# /'
check "95% of xz's samples reach __libc_start_main through xz's own code" \
	at_least /tmp/xz.folded '^xz\+0x[0-9a-f]+;__libc_start_main;[^;]+;xz\+0x' 95
check "its work is in liblzma, named liblzma.so.5.4.1+0xOFFSET (stripped: perf's [unknown])" \
	at_least /tmp/xz.folded ';liblzma\.so\.5[.0-9]*\+0x[0-9a-f]+ [0-9]+$' 50
check_output "no user frame is a bare address" '^0$' \
	sh -c 'grep -c -E "(^|;)0x[0-9a-f]+[; ]" /tmp/xz.folded'
# Eight times 10 MB: a second or two of work, its start and exit a few samples.
i4=/tmp/uw-in4.txt
hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/sha.folded -- /usr/bin/sha256sum \
	$i4 $i4 $i4 $i4 $i4 $i4 $i4 $i4 >/dev/null 2>/tmp/sha.err
grep '^\[ hotstack' /tmp/sha.err | sed 's/^/# /'
check "95% of sha256sum's samples reach __libc_start_main through its own code" \
	at_least /tmp/sha.folded '^sha256sum\+0x[0-9a-f]+;__libc_start_main;[^;]+;sha256sum\+0x' 95
# Kernel and user stacks of a process's system calls: the user stack under
# the kernel's, whole.
hotstack record -e $HS_EVENT $HS_RATE --stacks both -o /tmp/xzk.folded -- \
	/usr/bin/xz -T1 -1 -c /tmp/uw-in.txt >/dev/null 2>&1
check "--stacks both: xz's kernel stacks (page faults, reads) sit on its user stacks, whole" \
	at_least /tmp/xzk.folded '^xz\+0x[0-9a-f]+;__libc_start_main;[^;]+;xz\+0x.*;(entry_SYSCALL_64[^;]*|asm_exc_page_fault|el0t_64_sync);' 1

case " $HOTSTACK_DEBIAN " in
*" python3 "*)
	cat >/tmp/uw-fib.py <<'EOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print(fib(29))
EOF
	hotstack record -e $HS_EVENT $HS_RATE --stacks user -o /tmp/py.folded -- \
		/usr/bin/python3 /tmp/uw-fib.py >/tmp/py.out 2>&1
	check "record --stacks user -- Debian's python3 on a script" grep -q 514229 /tmp/py.out
	grep '^\[ hotstack' /tmp/py.out | sed 's/^/# /'
	check "95% of python3's samples reach __libc_start_main (its start and the script)" \
		at_least /tmp/py.folded '^_start;__libc_start_main;' 95
	check "the script's from __libc_start_main through Py_RunMain to the evaluation loop" \
		at_least /tmp/py.folded '^_start;__libc_start_main;[^;]+;Py_BytesMain;Py_RunMain;.*;_PyEval_EvalFrameDefault(;|$| )' 50
	;;
esac

# --- against perf --call-graph dwarf ----------------------------------------
# The same work under Debian's perf, which copies 8 KiB of stack a sample
# and unwinds it afterwards with elfutils: the same user stacks. Frames
# are compared by name, a binary's offset left out (perf names a frame no
# symbol covers "[unknown]" with its binary; a return address is an
# offset past the call in perf's, at it in hotstack's).
case " $HOTSTACK_DEBIAN " in
*" perf "*)
	# norm: folded lines with frames "binary+0xOFF" as "binary".
	norm() { sed -e 's/+0x[0-9a-f]*;/;/g' -e 's/+0x[0-9a-f]* \([0-9]*\)$/ \1/' "$1" |
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); c[$0] += n } END { for (s in c) print s, c[s] }'; }
	# perf script's samples (frames "IP SYM (DSO)", innermost first) folded,
	# user frames only, a frame no symbol covers as its binary's name.
	perf_fold() {
		awk '/^$/ { if (s != "") c[s]++; s = ""; next }
			$1 ~ /^[0-9a-f]+$/ {
				dso = $NF; gsub(/[()]/, "", dso)
				if (dso ~ /kernel\.kallsyms|^\[/ && dso != "[vdso]") next
				f = $2; if (f == "[unknown]") { n = split(dso, p, "/"); f = p[n] }
				s = s == "" ? f : f ";" s }
			END { if (s != "") c[s]++; for (k in c) print k, c[k] }' "$1"
	}
	# top FILE N: its N largest stacks of 1% of the samples or more, and
	# stacks FILE: all its stacks, without their counts.
	top() {
		awk '{ t += $NF; l[NR] = $0; n[NR] = $NF } END { for (i = 1; i <= NR; i++) if (n[i] * 100 >= t) print l[i] }' "$1" |
			sort -t' ' -k2 -n -r | head -n "$2" | sed 's/ [0-9]*$//'
	}
	stacks() { sed 's/ [0-9]*$//' "$1"; }
	/usr/bin/perf record -N -q -F 1000 -e cpu-clock --call-graph dwarf -o /tmp/perf.data -- \
		/usr/bin/xz -T1 -1 -c /tmp/uw-in.txt >/dev/null 2>/tmp/perf.err
	check "perf record --call-graph dwarf -- /usr/bin/xz (the same work)" \
		sh -c '[ -s /tmp/perf.data ] || { cat /tmp/perf.err; false; }'
	/usr/bin/perf script -i /tmp/perf.data --no-inline -F ip,sym,dso 2>/dev/null >/tmp/perf.txt
	perf_fold /tmp/perf.txt >/tmp/perf.folded
	norm /tmp/xz.folded >/tmp/hs.folded
	top /tmp/perf.folded 10 >/tmp/perf.top
	top /tmp/hs.folded 10 >/tmp/hs.top
	stacks /tmp/perf.folded >/tmp/perf.all
	stacks /tmp/hs.folded >/tmp/hs.all
	# within TOP ALL WHO: every stack of TOP is one of ALL.
	within() { n=0; while read -r s; do grep -q -x -F "$s" "$2" || { echo "only $3: $s"; n=1; }; done <"$1"; [ -s "$1" ] && [ $n = 0 ]; }
	check "perf's 10 hottest user stacks are in hotstack's profile, frame for frame" \
		within /tmp/perf.top /tmp/hs.all perf
	check "hotstack's 10 hottest are in perf's" within /tmp/hs.top /tmp/perf.all hotstack
	# The dynamic loader's samples before it jumps to the program (their
	# outermost frame ld.so's) are a fixed count that neither unwinder
	# takes to __libc_start_main: they weigh more in the shorter of the two
	# runs (a loaded host's), so both shares are of the program's samples
	# (share()).
	# A sample in __libc_start_main itself reaches it too.
	set -- $(share /tmp/perf.folded '__libc_start_main[; ]') $(share /tmp/hs.folded '__libc_start_main[; ]')
	echo "# the program's samples reaching __libc_start_main: perf $1% of $3, hotstack $5% of $7"
	check "hotstack reaches __libc_start_main in as many samples as perf (within 1%: $5% and $1%)" \
		awk -v p="$1" -v h="$5" 'BEGIN { exit !(h + 1 >= p) }'
	# What did not, of both, when it fails.
	awk -v p="$1" -v h="$5" 'BEGIN { exit !(h + 1 < p) }' && for f in hs perf; do
		grep -v -E '__libc_start_main[; ]|^ld-linux' /tmp/$f.folded | sort -t' ' -k2 -n -r |
			head -n 8 | sed "s/^/# $f not: /"
	done
	rm -f /tmp/perf.data /tmp/perf.txt /tmp/perf.folded /tmp/hs.folded /tmp/perf.top /tmp/hs.top \
		/tmp/perf.all /tmp/hs.all
	;;
esac

# --- the whole system ---------------------------------------------------------
# Each process the module samples without its tables is loaded as it is
# found: a program started after the recording is walked whole.
# The recording ends when both have run. uw_tree does a fixed work (2000
# calls of its leaf, about 2 s), not a fixed time: on a loaded host the
# guest's loader is as slow as the program, and it still has its share.
# It runs twice: its first process is found and its tables built, which
# a stalling host's guest can take longer than the run (a debug guest
# once walked none of its 3435 samples whole: its 16 tables built in
# 943 ms of a starved tool); the second's are there once it is found.
hotstack record -a -e $HS_EVENT $HS_RATE --stacks user -o /tmp/all.folded >/tmp/all.out 2>&1 &
rec=$!
wait_session
uw_tree_nofp -c 1000 0 6 2 spin
uw_tree_nofp -c 1000 0 6 2 spin
/usr/bin/xz -T1 -1 -c /tmp/uw-in.txt >/dev/null
kill -INT $rec
wait $rec
check "record -a --stacks user: the processes started after it" [ $? -eq 0 ]
sed 's/^/# /' /tmp/all.out
check "... are walked whole: uw_tree's stacks from _start" \
	at_least /tmp/all.folded '^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_[ab];){6}uw_leaf_spin [0-9]+$' 1
check "... and xz's from __libc_start_main" \
	at_least /tmp/all.folded '^xz\+0x[0-9a-f]+;__libc_start_main;[^;]+;xz\+0x.*;liblzma' 1
check_output "... named in their process, no [pid N] key unless --keys pid" '^0$' \
	sh -c 'grep -c "\[pid " /tmp/all.folded'

# A binary replaced on disk while it runs (another build: another build
# ID): its process is walked by the table of the file it maps, not of the
# one at its path now.
cp /bin/uw_tree_nofp /tmp/uwr
/tmp/uwr 600 6 1 spin &
uwr=$!
wait_until grep -q uwr /proc/$uwr/cmdline
sleep 0.2
cp /bin/uw_tree_fp /tmp/uwr.new
mv /tmp/uwr.new /tmp/uwr
hotstack record -e $HS_EVENT $HS_RATE --stacks user -p $uwr -d 1.5 -o /tmp/uwr.folded >/dev/null 2>&1
kill $uwr
wait $uwr 2>/dev/null
check "a binary replaced on disk while it runs: its process's stacks walked whole (_start to the leaf)" \
	at_least /tmp/uwr.folded '^[^;]+;__libc_start_main;[^;]+;([^;]+;){8}[^;]+ [0-9]+$' 80
rm -f /tmp/uwr

# top and agent walk user stacks the same way (--call-graph dwarf, their
# default too).
uw_tree_nofp 600 6 1 spin &
uwp=$!
hotstack top -b -n 1 -d 1.5 -e $HS_EVENT $HS_RATE --stacks user -p $uwp >/tmp/top.out 2>&1
check_output "top --stacks user -p PID: its stacks from the leaf to _start" \
	' uw_leaf_spin <- uw_rec_a <- .* <- uw_run <- main <- .*__libc_start_main <- _start$' cat /tmp/top.out
# The agent's profiles: until one has the whole stack (its first interval
# may begin before the tables are in: frame pointers until then).
agent_whole() {
	for f in /tmp/uwag/*.pb.gz; do
		[ -e "$f" ] && hotstack report "$f" -o - --format folded
	done >/tmp/uwag.folded
	grep -q -E "^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_a;){6}uw_leaf_spin [0-9]+$" \
		/tmp/uwag.folded
}
rm -rf /tmp/uwag
hotstack agent -i 1 -e $HS_EVENT $HS_RATE --stacks user -p $uwp --output-dir /tmp/uwag \
	--log /tmp/uwag.log &
ag=$!
wait_agent agent_whole
kill -INT $ag
wait $ag
kill $uwp
wait $uwp 2>/dev/null
check "agent --stacks user -p PID: its profiles' user stacks from _start" sh -c '
	grep -q -E "^_start;__libc_start_main;[^;]*;main;uw_run;(uw_rec_a;){6}uw_leaf_spin [0-9]+$" \
		/tmp/uwag.folded || { cat /tmp/uwag.log; sort -k2 -n -r /tmp/uwag.folded | head; exit 1; }'
rm -rf /tmp/uwag /tmp/uwag.log /tmp/uwag.folded /tmp/top.out

rm -f /tmp/uw*.folded /tmp/uw-in*.txt /tmp/uw-expect /tmp/uw-fib.py /tmp/xz*.folded /tmp/sha.folded \
	/tmp/py.folded /tmp/all.folded /tmp/st.folded /tmp/jit.folded
check "rmmod hotstack" rmmod hotstack
