# SPDX-License-Identifier: GPL-2.0
# The demo of `make run`, here or in the VM (where the module is in /tests).
hotstack=${HOTSTACK:-hotstack}
if ! grep -q '^hotstack ' /proc/modules; then
	insmod /tests/hotstack.ko || exit 1
fi
echo "\$ hotstack info"
$hotstack info
