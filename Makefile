# SPDX-License-Identifier: GPL-2.0
#
# hotstack: a thin wrapper around Kbuild and the tool's Makefile.
#
#   make               build hotstack.ko and the hotstack tool
#   make run           profile: here if modules can be loaded, else in a VM
#   make check         every test: lint, host unit tests, VM suites
#   make lint          checkpatch --strict and sparse on module/ and uapi/
#   make unit          host unit tests only
#   make check-vm KERNEL=generic|rt|debug|arm64|arm64-debug   one VM suite
#   make bench         sampling overhead against its floors (icount VM)
#   make bench-dump    the tool's dump path on 10^6 stacks (host, prints times)
#   make bench-tool    report, SVG, pprof, diff of a 50 MB profile against Python (host)
#   make dkms-install  register, build and install with DKMS
#   make install       the tool and its man pages: $(PREFIX)/bin/hotstack and
#                      $(PREFIX)/share/man/man1/hotstack*.1 (PREFIX=/usr/local,
#                      DESTDIR for a staging tree)
#
# KDIR: the kernel build tree. Default: the running kernel's, else the
# newest installed Debian linux-headers-*-amd64.

KDIR ?= $(shell tests/kdir.sh)
KERNEL ?= generic
VERSION := 0.1

all: module tool

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

tool:
	$(MAKE) -C userspace

deps:
	tests/deps.sh

lint: deps
	tests/lint.sh

unit: deps
	$(MAKE) -C tests/unit run

check-vm: deps
	tests/vm/run.sh $(KERNEL)

check:
	tests/check.sh

run:
	tests/run.sh

bench:
	tests/bench/run.sh

# The tool's dump path on 10^6 stacks (host; prints its time).
bench-dump:
	$(MAKE) -C tests/bench dump

# The tool on a 50 MB folded profile against a plain Python script (host;
# prints ratios and peak memory).
bench-tool:
	$(MAKE) -C tests/bench tool

# The tool's Makefile installs; a relative DESTDIR is taken from here.
install:
	$(MAKE) -C userspace install $(if $(DESTDIR),DESTDIR=$(abspath $(DESTDIR)))

dkms-install:
	dkms add $(CURDIR)
	dkms install hotstack/$(VERSION)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/bench clean

.PHONY: all module tool deps lint unit check-vm check run bench bench-dump bench-tool install \
	dkms-install clean
