# SPDX-License-Identifier: GPL-2.0
# make fuzz: the hostile-input fuzzer (hs_fuzz.c) alone, as t_80_fuzz.sh
# runs it, with the seed make fuzz chose (/tests/fuzz_seed) and 10^5 calls
# (or /tests/fuzz_calls). Run by tests/vm/run.sh KERNEL --script; hs_fuzz
# ends with "fuzz: N calls, N errors, seed S", which make fuzz prints last.
. /tests/lib.sh

seed=1
[ -r /tests/fuzz_seed ] && seed=$(cat /tests/fuzz_seed)
calls=100000
[ -r /tests/fuzz_calls ] && calls=$(cat /tests/fuzz_calls)

check "insmod hotstack.ko max_sessions=16" reload max_sessions=16
tap "hs_fuzz $calls $seed 4" hs_fuzz $calls $seed 4
check "rmmod hotstack after the fuzzer" rmmod hotstack
check "the module is gone: not in /proc/modules, no /dev/hotstack" \
	sh -c '! grep -q "^hotstack " /proc/modules && [ ! -e /dev/hotstack ]'
