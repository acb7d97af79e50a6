#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages of the README's fleet install, on the host: `make install`
# into a scratch root, `make deb` (dpkg-buildpackage), what each .deb holds
# (dpkg-deb), lintian without errors, and `dkms build` of the source the
# hotstack-dkms package installs, against the installed headers in a
# scratch DKMS tree. Prints TAP lines.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}
scratch=$out/deb-check
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
rm -rf "$scratch" && mkdir -p "$scratch"
fails=0

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fails=$((fails + 1)); }
# check DESC CMD...: CMD succeeds; else its output as comments.
check() {
	local desc=$1
	shift
	if "$@" >"$scratch/check.out" 2>&1; then
		ok "$desc"
	else
		notok "$desc"
		sed 's/^/#   /' "$scratch/check.out"
	fi
}
# has LISTING PATH...: each PATH is in the dpkg-deb -c LISTING.
has() {
	local listing=$1 p
	shift
	for p in "$@"; do
		grep -q -E " \./$p\$" "$listing" || { echo "missing: $p"; return 1; }
	done
}

# --- make install ------------------------------------------------------------
root=$scratch/root
check "make install DESTDIR=... PREFIX=/usr" make -s -C "$repo" install DESTDIR="$root" PREFIX=/usr \
	UNITDIR=/lib/systemd/system
check "it installs the tool, the unit, its config, modules-load.d and modprobe.d" sh -c "
	test -x $root/usr/bin/hotstack && test -f $root/lib/systemd/system/hotstack-agent.service &&
	test -f $root/etc/hotstack/agent.conf && test -f $root/etc/modules-load.d/hotstack.conf &&
	test -f $root/etc/modprobe.d/hotstack.conf"
check "the unit runs the installed tool with the config" \
	grep -q -x 'ExecStart=/usr/bin/hotstack agent --config /etc/hotstack/agent.conf' \
	"$root/lib/systemd/system/hotstack-agent.service"
# systemd's own rating of the sandbox (0 safest, 10 unsafe; below 4 is its
# "OK"): the unit without its hardening lines rates 9.6, UNSAFE.
check "systemd-analyze security rates the installed unit's exposure below 4 (OK)" sh -c "
	systemd-analyze security --offline=yes --root='$root' hotstack-agent.service 2>/dev/null |
	awk '/Overall exposure level/ { print \"# \" \$0; found = 1; ok = \$(NF - 2) + 0 < 4 }
		END { exit !(found && ok) }'"
echo "push http://127.0.0.1:9" >"$root/etc/hotstack/agent.conf"
make -s -C "$repo" install DESTDIR="$root" PREFIX=/usr UNITDIR=/lib/systemd/system >/dev/null 2>&1
check "make install again keeps an edited config" \
	grep -q -x 'push http://127.0.0.1:9' "$root/etc/hotstack/agent.conf"
check "the installed config is one the agent takes" \
	"$repo/userspace/hotstack" agent --config "$repo/userspace/dist/agent.conf" --help

# --- make deb --------------------------------------------------------------------
rm -f "$out"/hotstack_"$version"_*.deb "$out"/hotstack-dkms_"$version"_all.deb
t0=$(date +%s)
if make -s -C "$repo" deb >"$scratch/deb.log" 2>&1; then
	ok "make deb builds both packages with dpkg-buildpackage ($(($(date +%s) - t0)) s)"
else
	notok "make deb builds both packages with dpkg-buildpackage"
	tail -n 40 "$scratch/deb.log" | sed 's/^/#   /'
	echo "# $fails failed"
	exit 1
fi
tool=$(ls "$out"/hotstack_"$version"_*.deb)
dkmsdeb=$out/hotstack-dkms_${version}_all.deb
dpkg-deb -c "$tool" >"$scratch/tool.list"
dpkg-deb -c "$dkmsdeb" >"$scratch/dkms.list"
check "hotstack: the tool, its man pages, the unit, the config, the copyright" has "$scratch/tool.list" \
	usr/bin/hotstack lib/systemd/system/hotstack-agent.service etc/hotstack/agent.conf \
	usr/share/doc/hotstack/copyright usr/share/man/man1/hotstack.1.gz \
	usr/share/man/man1/hotstack-record.1.gz usr/share/man/man1/hotstack-agent.1.gz
check "hotstack: the config is a conffile" sh -c "dpkg-deb -e '$tool' $scratch/tool.ctl &&
	grep -q -x /etc/hotstack/agent.conf $scratch/tool.ctl/conffiles"
# Enabled again on upgrade only where the admin had it (was-enabled); never started.
check "hotstack: the unit is not enabled nor started at install (its config first)" sh -c "
	! grep -q 'deb-systemd-invoke' $scratch/tool.ctl/postinst &&
	awk '/was-enabled/ { w = 1 } /deb-systemd-helper enable/ && !w { bad = 1 } /^\t\tfi/ { w = 0 }
		END { exit bad }' $scratch/tool.ctl/postinst"
check "hotstack: depends on libcurl4 (the agent loads it to push), recommends hotstack-dkms" sh -c "
	dpkg-deb -f '$tool' Depends | grep -q libcurl4 &&
	dpkg-deb -f '$tool' Recommends | grep -q -x hotstack-dkms"
check "hotstack: the packaged tool runs: hotstack agent --help" sh -c "
	dpkg-deb -x '$tool' $scratch/tool && $scratch/tool/usr/bin/hotstack agent --help | grep -q -e '--push URL'"
check "hotstack: the unit is hardened: only /dev/hotstack, nothing writable, few capabilities" \
	sh -c "u=$scratch/tool/lib/systemd/system/hotstack-agent.service
	grep -q -x 'DevicePolicy=closed' \$u && grep -q -x 'DeviceAllow=/dev/hotstack rw' \$u &&
	grep -q -x 'ProtectSystem=strict' \$u && grep -q -x 'NoNewPrivileges=yes' \$u &&
	grep -q -x 'Type=notify' \$u && ! grep -q '^ReadWritePaths' \$u &&
	grep -q -x 'CapabilityBoundingSet=CAP_PERFMON CAP_SYSLOG CAP_SYS_PTRACE CAP_DAC_READ_SEARCH' \$u"
check "hotstack-dkms: the module's source, dkms.conf, modules-load.d and modprobe.d" \
	has "$scratch/dkms.list" "usr/src/hotstack-$version/dkms.conf" \
	"usr/src/hotstack-$version/Kbuild" "usr/src/hotstack-$version/module/main.c" \
	"usr/src/hotstack-$version/module/sample.c" "usr/src/hotstack-$version/uapi/linux/hotstack.h" \
	etc/modules-load.d/hotstack.conf etc/modprobe.d/hotstack.conf
check "hotstack-dkms: no built objects in it" sh -c "! grep -E '\.(o|ko|mod|cmd)$' $scratch/dkms.list"
check "hotstack-dkms: depends on dkms, and its postinst runs DKMS's" sh -c "
	dpkg-deb -f '$dkmsdeb' Depends | grep -q dkms &&
	dpkg-deb -e '$dkmsdeb' $scratch/dkms.ctl && grep -q 'dkms/common.postinst' $scratch/dkms.ctl/postinst"
# lintian as root says so on stderr; its tags are on stdout.
lintian --fail-on error "$tool" "$dkmsdeb" >"$scratch/lintian.log" 2>"$scratch/lintian.err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q '^E: ' "$scratch/lintian.log"; then
	ok "lintian reports no errors on either package ($(grep -c '^[WI]: ' "$scratch/lintian.log") warnings and notes)"
else
	notok "lintian reports no errors on either package (status $rc)"
fi
sed 's/^/#   /' "$scratch/lintian.log"

# --- DKMS builds the packaged source against the installed headers ---------------
kdir=$("$repo/tests/kdir.sh")
case $kdir in
/lib/modules/*/build) kver=${kdir#/lib/modules/} && kver=${kver%/build} ;;
*) kver=${kdir##*/linux-headers-} ;;
esac
dpkg-deb -x "$dkmsdeb" "$scratch/dkms"
mkdir -p "$scratch/dkms-tree"
if dkms build "hotstack/$version" -k "$kver" --dkmstree "$scratch/dkms-tree" \
	--sourcetree "$scratch/dkms/usr/src" >"$scratch/dkms.log" 2>&1 &&
	find "$scratch/dkms-tree" -name 'hotstack.ko*' -path '*/module/*' | grep -q .; then
	ok "dkms build of hotstack-dkms's source for $kver gives hotstack.ko"
else
	notok "dkms build of hotstack-dkms's source for $kver gives hotstack.ko"
	sed 's/^/#   /' "$scratch/dkms.log"
fi
[ $fails -eq 0 ]
