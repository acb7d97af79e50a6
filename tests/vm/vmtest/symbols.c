// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's symbolization against read()'s.
 */
#include "vmtest.h"

/* Write @p folded to @path; a TAP line. */
static void write_folded(const char *path, const struct hs_profile *p, const char *what)
{
	FILE *f = fopen(path, "w");

	tap(f && !hs_write_folded(f, p) && !fclose(f), "symbols: write %s (%zu lines)", what,
	    p->nr);
}

/*
 * One stopped session profiled (kernel and user stacks, every key,
 * recursion collapsed, @max_depth), then its profile written twice: from
 * read() (the module's symbols, plus the drop lines) to @out_read, and
 * from the mmap with the tool's kallsyms symbols to @out_mmap. The shell
 * test compares them.
 */
void test_symbols(unsigned int max_depth, const char *out_read, const char *out_mmap)
{
	struct hs_profile pr = { 0 }, pm = { 0 };
	struct hs_table_map m;
	struct hotstack_config c;
	struct hotstack_stats st;
	int fd = open_dev(), ret;
	uint64_t ids[64];
	char *text;

	default_config(&c);
	c.flags |= HOTSTACK_CFG_COLLAPSE;
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.keys = HOTSTACK_KEY_ALL;
	c.max_depth = max_depth;
	profile_workload(fd, &c, "symbols", 6, 4, 500);
	/* The cgroups named as the tool names them (read() names them too). */
	if (!hs_table_map(fd, &m)) {
		hs_cgroups_capture(hs_cgroup_root_here(), ids,
				   hs_table_cgroups(&m, ids, sizeof(ids) / sizeof(ids[0])), fd);
		hs_table_unmap(&m);
	}
	get_stats(fd, &st, 0);
	text = read_all(fd);
	tap(text && !hs_profile_parse(&pr, text, NULL) &&
	    !hs_profile_add_drops(&pr, st.total.drops), "symbols: read() text parsed");
	free(text);
	ret = hs_session_profile(fd, NULL, HS_GEN_ACTIVE, NULL, 0, &pm, 0);
	tap(!ret, "symbols: profile from the mmap and /proc/kallsyms (%s)", strerror(-ret));
	write_folded(out_read, &pr, out_read);
	write_folded(out_mmap, &pm, out_mmap);
	hs_profile_free(&pr);
	hs_profile_free(&pm);
	close(fd);
}
