# SPDX-License-Identifier: GPL-2.0
#
# hotstack: a thin wrapper around Kbuild and the tool's Makefile.
#
#   make               build hotstack.ko and the hotstack tool
#   make run           profile: here if modules can be loaded, else in a VM
#   make check         every test: lint, host unit tests, VM suites
#   make lint          checkpatch --strict and sparse on module/ and uapi/
#   make unit          host unit tests only
#   make check-vm KERNEL=generic|rt|debug|arm64|arm64-debug   one VM suite (Debian 12)
#   make check-vm KERNEL=trixie-generic|trixie-rt|trixie-debug|trixie-arm64|sid-generic
#   make fuzz [SEED=N] [KERNEL=debug] [CALLS=N]   the hostile-input fuzzer alone in a VM
#   make bench         sampling and off-CPU overhead against floors, perf, bcc, bpftrace (icount VM)
#   make bench-dump    the tool's dump path on 10^6 stacks (host, prints times)
#   make bench-tool    report, SVG, pprof, diff of a 50 MB profile against Python (host)
#   make dkms-install  register, build and install with DKMS
#   make install       the tool, its man pages, hotstack-agent.service, its config
#                      in /etc, modules-load.d and modprobe.d files
#                      (PREFIX=/usr/local, DESTDIR for a staging tree)
#   make deb           Debian packages hotstack and hotstack-dkms, in out/
#
# KDIR: the kernel build tree. Default: the running kernel's, else the
# newest installed Debian linux-headers-*-amd64.

KDIR ?= $(shell tests/kdir.sh)
KERNEL ?= generic
VERSION := 0.1

# make install's places.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || \
		   echo /lib/systemd/system)
MANDIR ?= $(PREFIX)/share/man

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

# The hostile-input fuzzer (tests/vm/hs_fuzz.c) alone in a VM, on the debug
# kernel unless KERNEL says otherwise: CALLS calls (default 10^5) with SEED
# (default: a new random one; SEED=N replays a run). The whole output goes
# to out/fuzz.log (the VM's files to out/fuzz/vm-KERNEL); the last line
# printed is the guest's "fuzz: N calls, N errors, seed S".
FUZZ_KERNEL = $(if $(filter command line environment,$(origin KERNEL)),$(KERNEL),debug)

fuzz: deps
	@mkdir -p out; \
	seed='$(SEED)'; [ -n "$$seed" ] || seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	tmp=$$(mktemp -d); echo "$$seed" >"$$tmp/seed"; echo '$(or $(CALLS),100000)' >"$$tmp/calls"; \
	echo "fuzz: $(FUZZ_KERNEL) kernel, seed $$seed: output in out/fuzz.log"; \
	HOTSTACK_OUT='$(CURDIR)/out/fuzz' \
	HOTSTACK_VM_EXTRA="$$tmp/seed:fuzz_seed $$tmp/calls:fuzz_calls" \
		tests/vm/run.sh $(FUZZ_KERNEL) --script tests/vm/guest/fuzz.sh >out/fuzz.log 2>&1; \
	rc=$$?; rm -rf "$$tmp"; \
	grep -v '^fuzz: [0-9]* calls' out/fuzz.log; \
	line=$$(grep '^fuzz: [0-9]* calls' out/fuzz.log | tail -n 1); \
	if [ -z "$$line" ]; then \
		rc=1; line="fuzz: no result from the guest (see out/fuzz.log), seed $$seed"; \
	fi; \
	echo "$$line"; exit $$rc

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

dkms-install:
	dkms add $(CURDIR)
	dkms install hotstack/$(VERSION)

# The tool, the agent's unit and config (an edited config is kept), the
# module's modules-load.d and modprobe.d files, man pages where there are.
install: tool
	install -D -m 755 userspace/hotstack $(DESTDIR)$(BINDIR)/hotstack
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' userspace/dist/hotstack-agent.service.in \
		>$(DESTDIR)$(UNITDIR)/hotstack-agent.service
	chmod 644 $(DESTDIR)$(UNITDIR)/hotstack-agent.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/hotstack/agent.conf ] || \
		install -D -m 644 userspace/dist/agent.conf $(DESTDIR)$(SYSCONFDIR)/hotstack/agent.conf
	install -D -m 644 userspace/dist/modules-load.conf \
		$(DESTDIR)$(SYSCONFDIR)/modules-load.d/hotstack.conf
	install -D -m 644 userspace/dist/modprobe.conf $(DESTDIR)$(SYSCONFDIR)/modprobe.d/hotstack.conf
	for m in $(wildcard userspace/man/*.[1-8]); do \
		install -D -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; done

# Debian packages with Debian's tools: the sources (git's files when this
# is a checkout) and userspace/debian-pkg as debian/ in out/deb, then
# dpkg-buildpackage; the .debs land in out/.
DEB_TREE := out/deb/hotstack-$(VERSION)
deb:
	rm -rf out/deb
	mkdir -p $(DEB_TREE)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z Kbuild Makefile README.md LICENSE dkms.conf module uapi userspace tests | \
			tar --null -T - -cf - | tar -xf - -C $(DEB_TREE); \
	else \
		cp -r Kbuild Makefile README.md LICENSE dkms.conf module uapi userspace tests $(DEB_TREE)/; \
	fi
	cp -r userspace/debian-pkg $(DEB_TREE)/debian
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "make deb: dpkg-buildpackage failed: out/deb/build.log"; exit 1; }
	mv out/deb/hotstack_$(VERSION)_*.deb out/deb/hotstack-dkms_$(VERSION)_all.deb out/
	ls -l out/*.deb

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	$(MAKE) -C userspace clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/bench clean

.PHONY: all module tool deps lint unit check-vm check fuzz run bench bench-dump bench-tool \
	install deb dkms-install clean
