# SPDX-License-Identifier: GPL-2.0
# The hostile-input fuzzer (hs_fuzz.c): random and mutated calls from 4
# threads at once on shared sessions, every CPU but 0 going offline and
# online meanwhile. Every call must be answered with success or an errno the
# ABI documents; the console must stay clean (the harness checks it).
# 10^5 calls on the x86 debug kernel (lockdep, inline KASAN, kmemleak: about 3
# minutes here), 5 x 10^3 on arm64-debug (four times slower still) and 2 x 10^4
# elsewhere; make fuzz runs any number alone. The seed is
# $HOTSTACK_FUZZ_SEED (from /tests/env when the harness writes it there),
# else a fixed one; a failure prints the command that replays it.
. /tests/lib.sh

seed=${HOTSTACK_FUZZ_SEED:-}
if [ -z "$seed" ] && [ -r /tests/env ]; then
	seed=$(sed -n 's/^HOTSTACK_FUZZ_SEED=//p' /tests/env)
fi
seed=${seed:-1}
case $HOTSTACK_KERNEL in
debug) calls=100000 ;;
arm64-debug) calls=5000 ;;
*) calls=20000 ;;
esac

check "insmod hotstack.ko max_sessions=16" reload max_sessions=16
tap "hs_fuzz $calls $seed 4" hs_fuzz $calls $seed 4
check "rmmod hotstack after the fuzzer" rmmod hotstack
check "the module is gone: not in /proc/modules, no /dev/hotstack" \
	sh -c '! grep -q "^hotstack " /proc/modules && [ ! -e /dev/hotstack ]'
