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
#   make fuzz [SEED=N] [KERNEL=debug] [CALLS=N]   the hostile-input fuzzer alone in a VM
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

.PHONY: all module tool deps lint unit check-vm check fuzz run bench bench-dump bench-tool \
	install dkms-install clean
