#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package hotstack's build, tests and demo need, when
# missing, plus any named on the command line (make bench: perf, bpftrace).
# Run by `make check` and `make bench`, and with --run by `make run` (the
# demo's packages only); safe to run again.
set -euo pipefail

# make run: only what the demo needs (the module, the tool, and the VM
# for a kernel that cannot load modules here), not the test suite's.
if [ "${1:-}" = --run ]; then
	shift
	run=1
	packages=(
		make gcc libc6-dev pkg-config linux-headers-amd64 libelf-dev
		libmnl-dev libdw-dev libncurses-dev libiberty-dev libcurl4-openssl-dev
		golang-github-google-pprof-dev protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
		qemu-system-x86 busybox-static cpio kmod iproute2
		gcc-i686-linux-gnu libc6-dev-i386-cross
		# Debian 13's kernel and a chroot to build for it (tests/release.sh)
		debootstrap
		"$@"
	)
else
packages=(
	# build: module against Debian's headers, the tool, the debug kernel
	make gcc libc6-dev pkg-config linux-headers-amd64 linux-headers-rt-amd64
	linux-source-6.1 bc bison flex libelf-dev libssl-dev xz-utils perl
	# libraries of the tool and of the unit tests
	libmnl-dev libdw-dev libncurses-dev libcmocka-dev python3
	# C++ and Rust user symbols demangled (libiberty's cplus_demangle)
	libiberty-dev
	# xmllint: the unit tests check that every SVG the tool writes is XML
	libxml2-utils
	# the SVG flame graph driven in a real browser (tests/unit/svg_browser.py)
	chromium
	# the man pages rendered and checked (tests/unit/man_pages.sh)
	man-db groff-base
	# pprof: profile.proto, protoc-c, protobuf-c, zlib; go tool pprof reads it in the tests
	golang-github-google-pprof-dev protobuf-c-compiler libprotobuf-c-dev zlib1g-dev golang-go
	# OTLP: the reader of tests/unit/otlp_check.py (protoc, Python's protobuf)
	protobuf-compiler python3-protobuf
	# hotstack agent: pushing to Pyroscope
	libcurl4-openssl-dev
	# make deb and its checks (tests/deb.sh): Debian's packaging tools, lintian,
	# systemd-analyze (the unit's sandbox)
	debhelper dh-dkms lintian dpkg-dev systemd
	# the agent's unit under a real systemd: a Debian root for the VM
	# (tests/vm/systemd.sh)
	debootstrap
	# lint
	sparse
	# the VM: emulator, initramfs, busybox for the guest
	qemu-system-x86 busybox-static cpio kmod iproute2
	# user stacks compared with perf record --call-graph dwarf in the guest,
	# and a stripped binary's symbols from a debuginfod server there
	linux-perf debuginfod libdebuginfod1
	# the 32-bit compat test (a cross compiler: gcc-multilib would remove
	# the arm64 one)
	gcc-i686-linux-gnu libc6-dev-i386-cross
	# the README's DKMS install, built and loaded by make check
	dkms openssl
	# arm64: cross compiler, emulator, the tool's libraries for arm64
	# and genl's (busybox-static:arm64 and iproute2:arm64 are unpacked by
	# tests/vm/kernel.sh)
	gcc-aarch64-linux-gnu qemu-system-arm libc6-dev:arm64 libmnl-dev:arm64
	libprotobuf-c-dev:arm64 zlib1g-dev:arm64 libdw-dev:arm64 libncurses-dev:arm64
	libiberty-dev:arm64 libcurl4-openssl-dev:arm64
	libbsd0:arm64 libcap2:arm64
	"$@"
)
fi

# OTLP profiles: opentelemetry-proto 1.11 or newer (profiles/v1development
# with its stack table). Debian 12 has no such package and Debian 13's is
# 1.5: sid's (arch: all, proto files only) is fetched with apt from a
# sources list of its own, and unpacked in the cache where
# userspace/Makefile looks for it (OTEL_PROTO_DIRS), once.
otel_proto() {
	local cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
	local dir=$cache/opentelemetry-proto tmp mirror opts rc=0
	local layout
	layout=$(dirname "$0")/../userspace/otlp-layout.sh
	# The layout fmt_otlp.c writes, field by field (1.8 and 1.9 have a stack table too).
	"$layout" /usr/include/opentelemetry/proto/profiles/v1development/profiles.proto &&
		return 0
	"$layout" "$dir/usr/include/opentelemetry/proto/profiles/v1development/profiles.proto" &&
		return 0
	[ "$(id -u)" -eq 0 ] || {
		echo "deps.sh: run as root once to fetch opentelemetry-proto (OTLP)" >&2
		return 1
	}
	echo "deps.sh: fetching Debian sid's opentelemetry-proto (OTLP's proto files)" >&2
	tmp=$(mktemp -d)
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -m1 '/debian/$' || true)
	echo "deb ${mirror:-http://deb.debian.org/debian/} sid main" >"$tmp/sources.list"
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
	# Lists and caches of its own: the host's apt never sees sid.
	opts=(-q -o Dir::Etc::SourceList="$tmp/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	      -o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" -o Debug::NoLocking=1)
	if apt-get "${opts[@]}" update >"$tmp/log" 2>&1 &&
		(cd "$tmp" && apt-get "${opts[@]}" download opentelemetry-proto) >>"$tmp/log" 2>&1 &&
		rm -rf "$dir" && mkdir -p "$cache" && dpkg-deb -x "$tmp"/opentelemetry-proto_*_all.deb "$dir" &&
		"$layout" "$dir/usr/include/opentelemetry/proto/profiles/v1development/profiles.proto"; then
		:
	else
		tail -n 20 "$tmp/log" >&2
		echo "deps.sh: cannot fetch opentelemetry-proto of 1.11's layout from sid" >&2
		rc=1
	fi
	rm -rf "$tmp"
	return $rc
}

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	[ "${run:-}" = 1 ] || otel_proto
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}" >&2
	echo "deps.sh: install them as root: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
	! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
[ "${run:-}" = 1 ] || otel_proto
