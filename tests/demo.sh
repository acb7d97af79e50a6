# SPDX-License-Identifier: GPL-2.0
# The demo of `make run`, on this machine or in the VM (module in /tests):
# record the whole system's kernel and user stacks while Debian's own tools
# (stripped, no frame pointers: walked by unwind tables) compress and hash
# a file, and dd and find copy and walk files, print the report, and hand
# both files over (in the VM, between FILE markers that the host turns back
# into files). The idle task is left out, as bcc's profile does.
hotstack=${HOTSTACK:-hotstack}
ko=${HOTSTACK_KO:-/tests/hotstack.ko}
dir=${HOTSTACK_DEMO_DIR:-/tmp}
loaded_here=0
if ! grep -q '^hotstack ' /proc/modules; then
	insmod "$ko" || exit 1
	loaded_here=1
fi
echo "\$ hotstack info"
$hotstack info || exit 1
echo
work="seq 1 300000 >$dir/demo.txt; /usr/bin/xz -T1 -1 -c $dir/demo.txt >/dev/null;
	/usr/bin/sha256sum $dir/demo.txt $dir/demo.txt $dir/demo.txt >/dev/null;
	dd if=/dev/zero of=/dev/null bs=4k count=200000 2>/dev/null; find / -xdev >/dev/null 2>&1"
echo "\$ hotstack record -a -F 999 --stacks both -o $dir/hotstack.folded -- sh -c 'xz ...; sha256sum ...; dd ...; find / ...'"
# stderr through a file: not a terminal, so no status line in the log.
$hotstack record -a -F 999 --stacks both -o "$dir/hotstack.folded" -- sh -c "$work" \
	2>"$dir/record.err"
rm -f "$dir/demo.txt"
rc=$?
cat "$dir/record.err"
[ $rc -eq 0 ] || exit 1
$hotstack report "$dir/hotstack.folded" -o "$dir/hotstack-report.txt" || exit 1
$hotstack report "$dir/hotstack.folded" -o "$dir/hotstack.svg" || exit 1
echo
echo "\$ hotstack report $dir/hotstack.folded | head -n 30"
head -n 30 "$dir/hotstack-report.txt"
if [ -n "$HOTSTACK_DEMO_MARKERS" ]; then
	for f in hotstack.folded hotstack-report.txt hotstack.svg; do
		echo "=== BEGIN FILE $f"
		cat "$dir/$f"
		echo "=== END FILE $f"
	done
fi
[ $loaded_here -eq 1 ] && rmmod hotstack
exit 0
