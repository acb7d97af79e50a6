// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a running session: the mmap protocol against SNAPSHOT and
 * RESET, read() while every CPU samples.
 */
#include "vmtest.h"

static volatile int race_stop;
static unsigned long race_attempts;	/* the reader's copies so far */

/*
 * SNAPSHOT and RESET, over and over, until race_stop; after each, until
 * the reader has made two more copies: the one the swap overtook (if any)
 * and one that starts after it. Both counts grow at the machine's pace.
 */
static void *race_swapper(void *arg)
{
	int fd = *(int *)arg;
	unsigned long n = 0, a;

	while (!race_stop) {
		xioctl(fd, n++ % 4 == 3 ? HOTSTACK_IOC_RESET : HOTSTACK_IOC_SNAPSHOT, NULL);
		a = __atomic_load_n(&race_attempts, __ATOMIC_ACQUIRE);
		while (!race_stop && __atomic_load_n(&race_attempts, __ATOMIC_ACQUIRE) < a + 2)
			usleep(50);
	}
	return NULL;
}

/*
 * One copy of the readable generation as uapi/linux/hotstack.h says to
 * read it: whether seq held still (the copy stands), and whether the
 * store and every CPU's counts were sound in it and added up (@sound:
 * gen_walk(), quietly: a copy the seq did not hold is retried).
 */
static bool race_copy(const struct map *m, bool *sound, bool *gen_same)
{
	const struct hotstack_mmap_header *h = m->h;
	unsigned int seq, gen_index;
	struct gen_view v;
	__u64 generation;

	do
		seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
	while (seq & 1);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	gen_index = h->readable;
	generation = h->generation;
	*sound = gen_walk(m, gen_index, &v, NULL);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	*gen_same = generation == __atomic_load_n(&h->generation, __ATOMIC_RELAXED);
	return seq == __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
}

/*
 * A reader of the mapping against SNAPSHOT and RESET from another thread,
 * while the CPUs sample: every copy the header's protocol accepts is
 * sound, and the protocol does retry (copies that a SNAPSHOT overtook).
 */
void test_mmap_race(void)
{
	unsigned long accepted = 0, retried = 0, unsound = 0, by_generation = 0;
	struct hotstack_config c;
	double end = now_s() + 60;
	pthread_t t;
	struct map m;
	int fd = open_dev();

	default_config(&c);
	c.table_entries = 4096;
	expect_cfg(fd, &c, 0, "mmap race");
	race_attempts = 0;
	if (map_session(fd, &m)) {
		tap(false, "mmap race: mmap");
		close(fd);
		return;
	}
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "mmap race: START");
	race_stop = 0;
	pthread_create(&t, NULL, race_swapper, &fd);
	while ((accepted < 300 || retried < 10) && now_s() < end) {
		bool sound, gen_same;

		if (race_copy(&m, &sound, &gen_same)) {
			accepted++;
			/* The first one said, walked again (what the kernel wrote may be gone). */
			if (!sound && !unsound++) {
				struct gen_view v;

				gen_walk(&m, m.h->readable, &v, "mmap race: unsound, walked again");
			}
		} else {
			retried++;
			/* What a reader checking generation alone would have taken. */
			by_generation += gen_same && !sound;
		}
		__atomic_add_fetch(&race_attempts, 1, __ATOMIC_RELEASE);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "mmap race: STOP");
	tap(accepted >= 50 && retried >= 1 && !unsound,
	    "mmap race: %lu copies the protocol accepted, %lu of them unsound; %lu retried "
	    "(SNAPSHOT or RESET meanwhile)", accepted, unsound, retried);
	printf("# %lu of the retried copies had the same generation but were not sound\n",
	       by_generation);
	munmap(m.base, m.size);
	close(fd);
}

/* Stacks of folded text and their counts: a line's count ends it. */
struct fline {
	char *stack;
	unsigned long long count;
};

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->stack, ((const struct fline *)b)->stack);
}

/*
 * Split @text (modified) into sorted lines, one per stack text: read()
 * prints the same text for two return addresses in one function, so
 * those lines are added up. Returns how many.
 */
static size_t flines(char *text, struct fline **out)
{
	size_t n = 0, cap = 64, i, m;
	struct fline *l = malloc(cap * sizeof(*l));
	char *line, *save;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		if (n == cap)
			l = realloc(l, (cap *= 2) * sizeof(*l));
		l[n].stack = line;
		l[n++].count = strtoull(sp + 1, NULL, 10);
	}
	qsort(l, n, sizeof(*l), fline_cmp);
	for (i = 0, m = 0; i < n; i++) {
		if (m && !strcmp(l[m - 1].stack, l[i].stack))
			l[m - 1].count += l[i].count;
		else
			l[m++] = l[i];
	}
	*out = l;
	return m;
}

/*
 * read() over and over while every CPU samples: each read is a picture of
 * some moment, so each of its stacks is one of the final read with at most
 * the final count.
 */
void test_read_live(void)
{
	struct hotstack_config c;
	unsigned long reads = 0, lines = 0, bad = 0;
	char *final, **texts = calloc(200, sizeof(char *));
	struct fline *fl;
	size_t nf, i, r, nr;
	double end;
	int fd = open_dev();

	default_config(&c);
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.keys = HOTSTACK_KEY_TGID | HOTSTACK_KEY_CONTEXT;
	expect_cfg(fd, &c, 0, "live read");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "live read: START");
	busy_start();
	/*
	 * 200 reads, or as many as 15 s allow on a slow kernel: at least 5,
	 * each of them seconds long under KASAN (every frame symbolized).
	 */
	for (r = 0, end = now_s() + 15; r < 200 && (r < 5 || now_s() < end); r++)
		texts[r] = read_all(fd);
	nr = r;
	busy_stop();
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "live read: STOP");
	final = read_all(fd);
	nf = flines(final, &fl);
	for (r = 0; r < nr; r++) {
		struct fline *l;
		size_t n = flines(texts[r], &l);

		reads++;
		lines += n;
		for (i = 0; i < n; i++) {
			struct fline *f = bsearch(&l[i], fl, nf, sizeof(*fl), fline_cmp);

			if (!f || l[i].count > f->count) {
				if (bad++ < 3)
					printf("#   read %zu: '%s %llu' (final: %llu)\n", r, l[i].stack,
					       l[i].count, f ? f->count : 0);
			}
		}
		free(l);
		free(texts[r]);
	}
	tap(nf > 0 && reads >= 5 && !bad,
	    "live read: %lu reads while running (%lu stacks): every one a stack of the end, "
	    "none counted more (%lu bad)", reads, lines, bad);
	free(fl);
	free(final);
	free(texts);
	close(fd);
}
