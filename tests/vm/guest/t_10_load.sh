# SPDX-License-Identifier: GPL-2.0
# Load, the device node, GET_INFO, unload and reload.
. /tests/lib.sh

check_output "hotstack info without the module says it is not loaded" \
	"module is not loaded" hotstack info
check "insmod hotstack.ko" insmod /tests/hotstack.ko
check "/proc/modules lists hotstack" grep -q '^hotstack ' /proc/modules
check "/dev/hotstack is a character device" test -c /dev/hotstack
check "/dev/hotstack is mode 0600, owned by root:root" \
	sh -c '[ "$(stat -c %a:%u:%g /dev/hotstack)" = 600:0:0 ]'
check_output "hotstack info reports ABI version 2" '^abi version: +2 ' hotstack info
check_output "hotstack info reports the session limit" 'at most 16$' hotstack info
tap "hs_vmtest getinfo" hs_vmtest getinfo

exec 3<>/dev/hotstack
check_refused "rmmod is refused while a session is open" \
	"unload module 'hotstack': Resource temporarily unavailable" rmmod hotstack
exec 3>&-
check "rmmod once the session is closed" rmmod hotstack
check "/dev/hotstack is gone after rmmod" test ! -e /dev/hotstack
check_output "hotstack info after rmmod says the module is not loaded" \
	"module is not loaded" hotstack info
check "insmod again after rmmod" insmod /tests/hotstack.ko
check "GET_INFO works after reload" hotstack info
check "rmmod again" rmmod hotstack
