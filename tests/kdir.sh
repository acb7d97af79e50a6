#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the default kernel build tree: the running kernel's, else the newest
# installed Debian linux-headers-6.1.0-N-amd64.
if [ -d "/lib/modules/$(uname -r)/build" ]; then
	echo "/lib/modules/$(uname -r)/build"
	exit 0
fi
ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
	grep -E '/linux-headers-[0-9.]+-[0-9]+-amd64$' | sort -V | tail -n 1
