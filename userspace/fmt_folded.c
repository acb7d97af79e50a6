// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: folded text, "frame;...;frame COUNT" a line, as read() gives it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <linux/hotstack.h>

#include "profile.h"

int hs_write_folded(FILE *f, const struct hs_profile *p)
{
	char num[24], *d;
	uint64_t n;
	size_t i;

	/*
	 * A process name alone leads each line (--keys comm without pid):
	 * only this line tells a reader so ("#" lines are comments).
	 */
	if ((p->keys & HOTSTACK_KEY_COMM) && !(p->keys & HOTSTACK_KEY_TGID))
		fprintf(f, HS_KEYS_COMMENT "comm%s\n",
			p->keys & HOTSTACK_KEY_CONTEXT ? ",context" : "");
	/* Not fprintf(): with 10^6 lines its parsing took longer than the copying. */
	flockfile(f);
	for (i = 0; i < p->nr; i++) {
		d = num + sizeof(num);
		*--d = '\n';
		n = p->lines[i].count;
		do
			*--d = '0' + n % 10;
		while (n /= 10);
		*--d = ' ';
		fwrite_unlocked(p->lines[i].stack, 1, p->lines[i].len, f);
		fwrite_unlocked(d, 1, num + sizeof(num) - d, f);
	}
	funlockfile(f);
	return ferror(f) ? -EIO : 0;
}
