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
	# With the module loaded, so leaked objects resolve to its symbols.
	reload
	hs_vmtest sessions 4 >/dev/null
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
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
