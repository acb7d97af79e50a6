/* SPDX-License-Identifier: GPL-2.0 */
/* Unit test helpers: a gzipped pprof file decoded, its strings by index. */
#ifndef HS_UNIT_PPROF_DECODE_H
#define HS_UNIT_PPROF_DECODE_H

#include <stdint.h>
#include <zlib.h>

#include "profile.pb-c.h"

static Perftools__Profiles__Profile *decode(const char *path)
{
	static unsigned char buf[1 << 20];
	gzFile gz = gzopen(path, "rb");
	int n;

	assert_non_null(gz);
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	assert_true(n > 0 && n < (int)sizeof(buf));
	return perftools__profiles__profile__unpack(NULL, n, buf);
}

static const char *str(const Perftools__Profiles__Profile *prof, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < prof->n_string_table);
	return prof->string_table[i];
}

#endif
