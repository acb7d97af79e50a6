// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-dump: the tool's dump path on a synthetic store of 10^6
 * distinct stacks (10-20 frames each, return addresses of a synthetic
 * kallsyms of 100,000 functions, a few call sites each), half of them
 * counted by each of two CPUs: load kallsyms, copy the store and the
 * CPUs' counts, add them up, symbolize, format, write folded text. Prints
 * the time of each step, elapsed and CPU (on a loaded machine the CPU time
 * is the steadier figure); a benchmark, not a test: it passes whatever it
 * takes.
 *
 *   dump_bench [STACKS [SYMBOLS [OUT]]]   (OUT: the folded text, else /dev/null)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hs_synth.h"
#include "profile.h"
#include "symbols.h"
#include "table.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: the same table every run. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 2685821657736338717ULL;
}

#define CALL_SITES 4	/* return addresses per function */
#define SLOTS 2		/* CPU count tables: their counts are merged */

int main(int argc, char **argv)
{
	size_t nr_stacks = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	size_t nr_syms = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000;
	char ksyms_path[] = "/tmp/hs-bench-kallsyms-XXXXXX", err[512];
	uint64_t *sym_addr, *sym_size, frames[32], entries = 1, a;
	struct hs_table_map m = { 0 };
	struct hs_profile p = { 0 };
	struct hs_table_copy c;
	struct hs_synth s;
	struct hs_ksyms k;
	double t0, t1, t2, t3, t4, c0, c1, c2, c3, c4;
	size_t i, j, depth, total_frames = 0;
	FILE *f, *out;
	int fd;

	/* A kallsyms: the core kernel, then a tenth of the functions in modules. */
	sym_addr = malloc(nr_syms * sizeof(*sym_addr));
	sym_size = malloc(nr_syms * sizeof(*sym_size));
	fd = mkstemp(ksyms_path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!sym_addr || !sym_size || !f) {
		perror("dump_bench");
		return 1;
	}
	a = 0xffffffff81000000ULL;
	for (i = 0; i < nr_syms; i++) {
		if (i == nr_syms - nr_syms / 10)
			a = 0xffffffffc0000000ULL;
		sym_addr[i] = a;
		sym_size[i] = 64 + rnd() % 1024;
		if (a < 0xffffffffc0000000ULL)
			fprintf(f, "%016llx %c func_%zu_%s\n", (unsigned long long)a,
				i % 3 ? 'T' : 't', i, i % 7 ? "do_work" : "handler.isra.0");
		else
			fprintf(f, "%016llx t mod_func_%zu\t[module_%zu]\n", (unsigned long long)a,
				i, i % 50);
		a += sym_size[i];
	}
	fclose(f);

	/*
	 * One store for both CPUs (this machine's) at most half full, as each
	 * CPU's count table; its arena holds every stack's frames.
	 */
	while (entries < 2 * nr_stacks)
		entries *= 2;
	if (hs_synth_init(&s, SLOTS, entries, nr_stacks * 20 + 20)) {
		perror("dump_bench: table");
		return 1;
	}
	/* Distinct stacks: the innermost frame alone tells them apart. */
	for (i = 0; i < nr_stacks; i++) {
		depth = 10 + rnd() % 11;
		frames[0] = sym_addr[i % nr_syms] + i / nr_syms % sym_size[i % nr_syms];
		for (j = 1; j < depth; j++) {
			size_t fn = rnd() % nr_syms;

			/* A call site: a return address inside the function. */
			frames[j] = sym_addr[fn] + 1 + (rnd() % CALL_SITES) * sym_size[fn] / CALL_SITES;
		}
		if (!hs_synth_add(&s, 0, i % SLOTS, frames, depth, 0, 1 + rnd() % 100)) {
			fprintf(stderr, "dump_bench: the synthetic store is full\n");
			return 1;
		}
		total_frames += depth;
	}
	m.base = s.buf;
	m.size = s.size;
	out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
	if (!out) {
		perror("dump_bench: output");
		return 1;
	}

	t0 = now();
	c0 = cpu();
	if (hs_ksyms_load(&k, ksyms_path, NULL, err, sizeof(err))) {
		fprintf(stderr, "dump_bench: %s\n", err);
		return 1;
	}
	t1 = now();
	c1 = cpu();
	if (hs_table_copy(&m, HS_GEN_ACTIVE, &c)) {
		fprintf(stderr, "dump_bench: cannot copy the table\n");
		return 1;
	}
	t2 = now();
	c2 = cpu();
	if (hs_table_profile(&c, &k, NULL, 0, &p, 0)) {
		fprintf(stderr, "dump_bench: out of memory\n");
		return 1;
	}
	t3 = now();
	c3 = cpu();
	hs_write_folded(out, &p);
	fflush(out);
	t4 = now();
	c4 = cpu();

	printf("dump_bench: %zu distinct stacks (%zu frames) in %d CPU tables, %zu symbols\n",
	       c.nr, total_frames, SLOTS, k.nr);
	printf("                       wall ms   CPU ms\n");
	printf("  load kallsyms        %7.1f  %7.1f\n", (t1 - t0) * 1e3, (c1 - c0) * 1e3);
	printf("  copy + merge table   %7.1f  %7.1f\n", (t2 - t1) * 1e3, (c2 - c1) * 1e3);
	printf("  symbolize + format   %7.1f  %7.1f\n", (t3 - t2) * 1e3, (c3 - c2) * 1e3);
	printf("  write folded         %7.1f  %7.1f\n", (t4 - t3) * 1e3, (c4 - c3) * 1e3);
	printf("  table -> folded      %7.1f  %7.1f\n", (t4 - t0) * 1e3, (c4 - c0) * 1e3);
	fclose(out);
	hs_profile_free(&p);
	hs_table_copy_free(&c);
	hs_ksyms_free(&k);
	free(s.buf);
	free(sym_addr);
	free(sym_size);
	unlink(ksyms_path);
	return 0;
}
