#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Provide a guest kernel for the VM tests, cached outside the repository.
#
#   tests/vm/kernel.sh generic|rt|debug
#
# Prints two shell assignments on stdout:
#   KIMAGE=<kernel image to boot>   KDIR=<tree to build modules against>
#
# generic: Debian's linux-image-6.1.0-N-amd64 matching the installed
#          linux-headers-amd64 (apt-get download + dpkg-deb -x).
# rt:      the same for Debian's PREEMPT_RT flavour (linux-image-rt-amd64).
# debug:   built from Debian's linux-source-6.1: tinyconfig plus
#          debug-x86_64.config (lockdep, KASAN, kmemleak, frame pointers),
#          cached by the hash of that fragment and of the source package.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
mkdir -p "$cache"
kind=${1:?usage: kernel.sh generic|rt|debug}

log() { echo "kernel.sh: $*" >&2; }

# The ABI name (6.1.0-N) of the newest installed Debian headers of a flavour.
headers_abi() {
	local flavour=$1
	dpkg-query -W -f='${Status} ${Package}\n' "linux-headers-6.1.0-*-$flavour" 2>/dev/null |
		awk '$3 == "installed" { print $4 }' |
		sed -n "s/^linux-headers-\(6\.1\.0-[0-9]*\)-$flavour\$/\1/p" | sort -V | tail -n 1
}

debian_kernel() {
	local flavour=$1 abi pkgver dir
	abi=$(headers_abi "$flavour")
	if [ -z "$abi" ]; then
		log "no linux-headers-6.1.0-*-$flavour installed (run tests/deps.sh)"
		exit 1
	fi
	pkgver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi-$flavour")
	dir="$cache/linux-image-$abi-$flavour-$pkgver"
	if [ ! -e "$dir/.done" ]; then
		log "fetching linux-image-$abi-$flavour $pkgver"
		rm -rf "$dir" && mkdir -p "$dir/deb"
		(cd "$dir/deb" && apt-get download -q "linux-image-$abi-$flavour=$pkgver" >&2)
		dpkg-deb -x "$dir"/deb/*.deb "$dir/root"
		# Only the kernel image boots: modules are not needed in the guest.
		find "$dir/root" -mindepth 1 -maxdepth 1 ! -name boot -exec rm -rf {} +
		rm -rf "$dir/deb"
		touch "$dir/.done"
	fi
	echo "KIMAGE=$dir/root/boot/vmlinuz-$abi-$flavour"
	echo "KDIR=/usr/src/linux-headers-$abi-$flavour"
}

# Extract Debian's linux-source-6.1 once; prints the tree's path.
kernel_source() {
	local tarball=/usr/src/linux-source-6.1.tar.xz ver dir
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	dir="$cache/linux-source-$ver"
	if [ ! -e "$dir/.done" ]; then
		log "extracting linux-source-6.1 $ver"
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf "$tarball"
		touch "$dir/.done"
	fi
	echo "$dir"
}

debug_kernel() {
	local src key dir frag=$here/debug-x86_64.config
	src=$(kernel_source)
	key=$(cat "$frag" <(basename "$src") | sha256sum | cut -c1-16)
	dir="$cache/linux-debug-$key"
	if [ ! -e "$dir/.done" ]; then
		# Incremental: a build cut short resumes where it stopped.
		log "building the debug kernel in $dir (about 6 minutes)"
		mkdir -p "$dir"
		make -s -C "$src" O="$dir" tinyconfig >&2
		"$src/scripts/kconfig/merge_config.sh" -m -O "$dir" \
			"$dir/.config" "$frag" >/dev/null 2>&1
		make -s -C "$src" O="$dir" olddefconfig >&2
		# Every option the fragment asks for must have survived.
		local opt want got
		while IFS='=' read -r opt want; do
			case $opt in CONFIG_*) ;; *) continue ;; esac
			got=$(sed -n "s/^$opt=//p" "$dir/.config")
			[ "$want" = n ] && [ -z "$got" ] && continue
			if [ "$want" != "$got" ]; then
				log "debug config: $opt=$want did not stick (got '$got')"
				exit 1
			fi
		done < "$frag"
		make -s -C "$dir" -j"$(nproc)" bzImage modules >&2
		touch "$dir/.done"
		# Builds of older fragments only take disk space now.
		find "$cache" -maxdepth 1 -name 'linux-debug-*' ! -name "linux-debug-$key" \
			-exec rm -rf {} +
	fi
	echo "KIMAGE=$dir/arch/x86/boot/bzImage"
	echo "KDIR=$dir"
}

case $kind in
generic) debian_kernel amd64 ;;
rt) debian_kernel rt-amd64 ;;
debug) debug_kernel ;;
source) kernel_source ;;
*) log "unknown kernel '$kind' (generic, rt, debug, source)"; exit 2 ;;
esac
