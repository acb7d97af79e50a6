# SPDX-License-Identifier: GPL-2.0
# Unwind tables through the ioctls alone (hs_uwtest.c), without the tool:
# every field of ADD_TABLE, SET_MAPS and UNWIND_MISSES checked, the limits
# and the accounting, a process sampled without mappings reported; then
# tables that lie, a stack pointer in unmapped memory, code unmapped and a
# process exec'ing while they are sampled (the console must stay clean: the
# harness checks it).
. /tests/lib.sh

check "insmod hotstack.ko" reload
tap "hs_uwtest errors" hs_uwtest errors
tap "hs_uwtest hostile 3" hs_uwtest hostile 3
check "rmmod hotstack" rmmod hotstack
