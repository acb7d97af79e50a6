# SPDX-License-Identifier: GPL-2.0
# The demo of `make run`, on this machine or in the VM (module in /tests).
# Loads hotstack with a persistent session, makes the kernel busy for a
# few seconds, and shows the hottest kernel stacks.
hotstack=${HOTSTACK:-hotstack}
ko=${HOTSTACK_KO:-/tests/hotstack.ko}
loaded_here=0
if ! grep -q '^hotstack ' /proc/modules; then
	insmod "$ko" autostart=1 autostart_freq=999 || exit 1
	loaded_here=1
fi
echo "\$ hotstack info"
$hotstack info || exit 1
echo
echo "\$ dd if=/dev/zero of=/dev/null bs=4k count=100000; find / -xdev >/dev/null"
dd if=/dev/zero of=/dev/null bs=4k count=100000 2>/dev/null
find / -xdev >/dev/null 2>&1
echo
echo "\$ cat /dev/hotstack   # the 10 hottest kernel stacks (folded: outermost first, count last)"
cat /dev/hotstack >/tmp/hotstack.folded
if [ ! -s /tmp/hotstack.folded ]; then
	echo "(nothing: hotstack was already loaded without autostart=1)"
else
	awk '{ print $NF "\t" $0 }' /tmp/hotstack.folded | sort -rn | head -n 10 | cut -f2- |
		cut -c1-200
	echo
	echo "$(wc -l </tmp/hotstack.folded) distinct stacks; all of them in /tmp/hotstack.folded"
fi
[ $loaded_here -eq 1 ] && rmmod hotstack
exit 0
