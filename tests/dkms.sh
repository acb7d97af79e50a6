#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's build paths on every release of the support matrix, as that
# release's users take them: in the release itself (the host for its own
# release, a chroot of trixie or sid: tests/release.sh), with its gcc and
# its linux-headers-amd64,
#   - dkms.conf's own make line (W=1, warnings as errors),
#   - `dkms build` of this tree into a scratch DKMS tree,
# and the module DKMS built loaded and used in the VM on that release's
# kernel. In the chroots also sparse (C=2) and W=1 on the module and the
# test modules, for x86_64 and for arm64 (Debian's linux-headers-arm64,
# cross-built; tests/lint.sh does both on the host's release). Prints TAP
# lines.
#
#   tests/dkms.sh [RELEASE...]     (default: the host's, trixie, sid)
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
host=$(. /etc/os-release && echo "$VERSION_CODENAME")
releases=${*:-$host trixie sid}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
rc=0

# The guest's check of the module DKMS built.
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat >"$script" <<'SCRIPT'
. /tests/lib.sh
check "insmod the module DKMS built" insmod /tests/dkms-hotstack.ko
check_output "hotstack info talks to it: the tool's ABI" \
	'^abi version: +([0-9]+) \(this tool: \1\)' hotstack info
check "hotstack record -d 1 with it" hotstack record -d 1 -o /tmp/dkms.folded
check "rmmod it" rmmod hotstack
SCRIPT

for release in $releases; do
	tag="[$release]"
	out=${HOTSTACK_OUT:-$repo/out}/dkms-$release
	rm -rf "$out" && mkdir -p "$out"
	if ! vars=$("$repo/tests/release.sh" "$release" 2>"$out/release.log"); then
		echo "not ok - $tag a $release root to build in"
		sed 's/^/# /' "$out/release.log"
		rc=1
		continue
	fi
	eval "$vars"
	run=("$repo/tests/release.sh" "$release" run)
	# The sources as DKMS installs them, where the release sees them.
	dir=/tmp/hotstack-dkms-$release
	rm -rf "${ROOT}$dir" && mkdir -p "${ROOT}$dir/src/hotstack-$version" "${ROOT}$dir/tree"
	cp -r "$repo/Kbuild" "$repo/dkms.conf" "$repo/module" "$repo/uapi" \
		"${ROOT}$dir/src/hotstack-$version/"
	cp -r "${ROOT}$dir/src/hotstack-$version" "${ROOT}$dir/make"

	# dkms.conf's MAKE line, as written, with W=1 and -Werror added.
	line=$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$repo/dkms.conf")
	line=${line//\$\{kernel_source_dir\}//lib/modules/$KVER/build}
	line=${line//\$\{dkms_tree\}\/\$\{PACKAGE_NAME\}\/\$\{PACKAGE_VERSION\}\/build/$dir/make}
	if "${run[@]}" sh -c "$line W=1 KCFLAGS=-Werror" >"$out/make.log" 2>&1 &&
		! grep -q -i 'warning' "$out/make.log"; then
		echo "ok - $tag gcc $CC_VERSION, linux-headers $KVER ($KREL): dkms.conf's make line builds hotstack.ko, W=1 clean"
	else
		echo "not ok - $tag gcc $CC_VERSION, linux-headers $KVER ($KREL): dkms.conf's make line builds hotstack.ko, W=1 clean"
		sed 's/^/# /' "$out/make.log"
		rc=1
	fi

	if "${run[@]}" dkms build "hotstack/$version" -k "$KVER" --dkmstree "$dir/tree" \
		--sourcetree "$dir/src" >"$out/build.log" 2>&1; then
		echo "ok - $tag dkms build hotstack/$version for $KVER"
	else
		echo "not ok - $tag dkms build hotstack/$version for $KVER"
		sed 's/^/# /' "$out/build.log"
		rc=1
		continue
	fi
	ko=$(find "${ROOT}$dir/tree" -name 'hotstack.ko*' -path '*/module/*' | head -n 1)
	cp "$ko" "$out/dkms-hotstack.ko"

	# sparse and W=1 for both architectures, with the test modules.
	for arch in x86_64 arm64; do
		[ -n "$ROOT" ] || break
		kdir=/usr/src/linux-headers-$KVER cross=
		[ $arch = arm64 ] && kdir=/usr/src/linux-headers-$KVER_ARM64 cross=aarch64-linux-gnu-
		rm -rf "${ROOT}$dir/sparse" && cp -r "${ROOT}$dir/src/hotstack-$version" "${ROOT}$dir/sparse"
		cp -r "$repo/tests/kmod" "${ROOT}$dir/sparse/kmod"
		kmake=(make -s -C "$kdir" ARCH=$arch CROSS_COMPILE=$cross W=1 C=2 KCFLAGS=-Werror)
		if "${run[@]}" "${kmake[@]}" M="$dir/sparse" modules >"$out/sparse-$arch.log" 2>&1 &&
			"${run[@]}" "${kmake[@]}" M="$dir/sparse/kmod" \
				KBUILD_EXTRA_SYMBOLS="$dir/sparse/Module.symvers" modules \
				>>"$out/sparse-$arch.log" 2>&1 &&
			! grep -E -q 'warning|error' "$out/sparse-$arch.log"; then
			echo "ok - $tag sparse (C=2) and W=1 on module/ and tests/kmod/ ($arch, ${kdir##*/})"
		else
			echo "not ok - $tag sparse (C=2) and W=1 on module/ and tests/kmod/ ($arch, ${kdir##*/})"
			sed 's/^/# /' "$out/sparse-$arch.log"
			rc=1
		fi
	done
	rm -rf "${ROOT}$dir"
	kind=generic
	[ "$release" = "$host" ] || kind=$release-generic
	HOTSTACK_OUT=$out HOTSTACK_VM_EXTRA="$out/dkms-hotstack.ko:dkms-hotstack.ko" \
		"$repo/tests/vm/run.sh" "$kind" --script "$script" |
		sed -e "s/^\(not ok\|ok\) - \[$kind\] /\1 - [dkms $release] /" | grep -v '^HOTSTACK-VM-DONE'
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
exit $rc
