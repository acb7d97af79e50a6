# SPDX-License-Identifier: GPL-2.0
# The guest's test run under systemd (hotstack-test.service), as
# tests/vm/guest/init runs a script: its output on the tests' port between
# the lines the host counts its checks by, then power off.
. /tests/env
export HOTSTACK_KERNEL HOTSTACK_ARCH HOTSTACK_MODE
exec >"$HOTSTACK_TAP" 2>&1
echo "# kernel $(uname -r) ($HOTSTACK_KERNEL), $(systemctl --version | head -n 1)"
echo "# begin $HOTSTACK_SCRIPT"
t0=$(cut -d. -f1 /proc/uptime)
sh /tests/script.sh
echo "# end $HOTSTACK_SCRIPT exit $? took $(($(cut -d. -f1 /proc/uptime) - t0))s"
echo HOTSTACK-VM-DONE
systemctl --no-block --check-inhibitors=no poweroff
