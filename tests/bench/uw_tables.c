// SPDX-License-Identifier: GPL-2.0
/*
 * make bench: the unwind tables of a few of Debian's binaries, as the
 * tool builds them (userspace/unwind.c) and the module stores them: rows,
 * rules, the bytes the module takes (4 a row, 12 a rule, 4 a 64 KiB page
 * of code) and a row's share, and the build's time on this host.
 *
 *   uw_tables FILE...
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gelf.h>

#include "unwind.h"

int main(int argc, char **argv)
{
	int i, ret = 0;

	elf_version(EV_CURRENT);
	printf("%-48s %8s %6s %10s %9s %8s\n", "binary", "rows", "rules", "bytes", "bytes/row",
	       "build ms");
	for (i = 1; i < argc; i++) {
		struct hs_uw_table t;
		struct timespec a, b;
		uint64_t bytes;
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

		if (!elf) {
			printf("%-48s cannot be read\n", argv[i]);
			ret = 1;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (hs_uw_build(elf, &t)) {
			printf("%-48s no table\n", argv[i]);
			ret = 1;
		} else {
			clock_gettime(CLOCK_MONOTONIC, &b);
			bytes = hs_uw_kernel_bytes(&t);
			printf("%-48s %8u %6u %10llu %9.2f %8.1f\n", argv[i], t.nr_rows, t.nr_rules,
			       (unsigned long long)bytes, (double)bytes / t.nr_rows,
			       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
			hs_uw_table_free(&t);
		}
		elf_end(elf);
		close(fd);
	}
	return ret;
}
