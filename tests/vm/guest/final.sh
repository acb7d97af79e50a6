# SPDX-License-Identifier: GPL-2.0
# Run after every suite: the kernel must be untainted by warnings or oopses,
# and (on the debug kernel) kmemleak must find nothing.
. /tests/lib.sh

taint=$(cat /proc/sys/kernel/tainted)
# B (bad page, 5), D (died, 7), W (warning, 9), L (soft lockup, 14).
if [ $((taint & ((1 << 5) | (1 << 7) | (1 << 9) | (1 << 14)))) -eq 0 ]; then
	ok "kernel not tainted by a warning, oops or lockup (taint $taint)"
else
	notok "kernel not tainted by a warning, oops or lockup (taint $taint)"
fi

if [ -e /sys/kernel/debug/kmemleak ]; then
	# With the module loaded, so leaked objects resolve to its symbols;
	# sessions opened and closed just before, so a leak of theirs counts.
	reload max_sessions=4
	tap "hs_vmtest sessions 4" hs_vmtest sessions 4
	# kmemleak reports only objects at least 5 s old (its minimum age,
	# jiffies): the sessions' are looked at once they are that old.
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >/tmp/kmemleak
	if [ -s /tmp/kmemleak ]; then
		notok "kmemleak finds no leak"
		sed 's/^/#   /' /tmp/kmemleak
	else
		ok "kmemleak finds no leak"
	fi
	rmmod hotstack
fi
