# SPDX-License-Identifier: GPL-2.0
# Module parameters: bounds, session limit, group access.
. /tests/lib.sh

check_refused "insmod max_sessions=0 is refused, and says why" \
	'max_sessions=0 is out of range 1-1024' insmod /tests/hotstack.ko max_sessions=0
check_refused "insmod max_sessions=1025 is refused" \
	'max_sessions=1025 is out of range 1-1024' insmod /tests/hotstack.ko max_sessions=1025
check_refused "insmod max_memory_mb=0 is refused" \
	'max_memory_mb=0 is out of range' insmod /tests/hotstack.ko max_memory_mb=0
check_refused "insmod event_rate=0 is refused" \
	'event_rate=0 is out of range' insmod /tests/hotstack.ko event_rate=0
check_refused "insmod group_max_freq=0 is refused" \
	'group_max_freq=0 is out of range' insmod /tests/hotstack.ko group_max_freq=0
check_refused "insmod group_max_sessions=0 is refused" \
	'group_max_sessions=0 is out of range 1-1024' insmod /tests/hotstack.ko group_max_sessions=0
check_refused "insmod group_max_memory_mb=0 is refused" \
	'group_max_memory_mb=0 is out of range' insmod /tests/hotstack.ko group_max_memory_mb=0
check_refused "insmod group=-5 is refused" \
	'group=-5: use a group ID, or -1 for root only' insmod /tests/hotstack.ko group=-5
check_refused "insmod group=4294967295 (no such gid: (gid_t)-1) is refused" \
	'group=4294967295 is not a valid group ID' insmod /tests/hotstack.ko group=4294967295
check "no refused insmod left the module loaded" sh -c '! grep -q "^hotstack " /proc/modules'

check "insmod max_sessions=3" reload max_sessions=3
tap "hs_vmtest sessions 3" hs_vmtest sessions 3
exec 3<>/dev/hotstack 4<>/dev/hotstack 5<>/dev/hotstack
check_output "hotstack info with every session taken explains EBUSY" \
	"too many hotstack sessions" hotstack info
exec 3>&- 4>&- 5>&-

check "insmod (root only)" reload
tap "uid 1000 cannot open a root-only device" \
	hs_vmtest runas 1000 1000 hs_vmtest open EACCES
check_output "hotstack info as uid 1000 explains the permission problem" \
	"permission denied: run as root" hs_vmtest runas 1000 1000 hotstack info

check "insmod group=1234" reload group=1234
check "with group=1234 /dev/hotstack is mode 0666" \
	sh -c '[ "$(stat -c %a /dev/hotstack)" = 666 ]'
tap "uid 1000 outside group 1234 is refused with EPERM" \
	hs_vmtest runas 1000 1000 hs_vmtest open EPERM
tap "uid 1000 with supplementary group 1234 may open" \
	hs_vmtest runas 1000 1000,1234 hs_vmtest open ok
tap "uid 1000 with primary group 1234 may open" \
	hs_vmtest runas 1000 1234 hs_vmtest open ok
check_output "hotstack info as a member of the group shows its quota" \
	'^user quota:   1 of 4 sessions, 0 of 64 MiB, 0 of 1000 Hz$' \
	hs_vmtest runas 1000 1234 hotstack info
check_output "hotstack info as root: no quota" '^user quota:   none' hotstack info

# Quotas: one member cannot lock root (or the other members) out.
check "insmod group=1234 max_sessions=3 group_max_sessions=1" \
	reload group=1234 max_sessions=3 group_max_sessions=1
tap "hs_vmtest quota-sessions" hs_vmtest quota-sessions
check_output "hotstack info past the user's sessions explains EDQUOT" \
	'holds all the hotstack sessions it may' \
	hs_vmtest runas 1000 1234 sh -c 'exec 3<>/dev/hotstack; hotstack info'
check "insmod group=1234 max_memory_mb=4 group_max_memory_mb=2" \
	reload group=1234 max_memory_mb=4 group_max_memory_mb=2
tap "hs_vmtest quota-use" hs_vmtest quota-use
check "rmmod" rmmod hotstack
