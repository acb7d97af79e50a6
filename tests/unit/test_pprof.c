// SPDX-License-Identifier: GPL-2.0
/*
 * pprof output and input: folded -> pprof -> folded is exact, the protobuf
 * holds what the README says, Go's own pprof reads it, foreign profiles and
 * broken files are read or refused clearly.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "commands.h"
#include "output.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "pprof_decode.h"
#include "record.h"
#include "tool.h"

/* Every kind of frame and marker hotstack writes, a repeated line, a zero count. */
static const char golden[] =
	"sh;[pid 42];[task];entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read;ext4_file_read_iter "
	"[ext4];leaf 6\n"
	"sh;[pid 42];[task];entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write 3\n"
	"sh;[pid 42];[task];entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write 2\n"
	"sh;[pid 42];[user] 1\n"
	"0x55d0c0de1000;0x7f0012345678;entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read 4\n"
	"[truncated];rec;rec;leaf 2\n"
	"[collapsed 3];hs_workload_write [hs_workload];hs_rec_a [hs_workload];hs_leaf "
	"[hs_workload] 7\n"
	"[softirq];[unknown] 0\n"
	"[dropped];[table full] 5\n"
	"[dropped];[nested] 1\n";

/* The golden as every output gives it: the repeated stack is one line of 3 + 2. */
static const char golden_merged[] =
	"sh;[pid 42];[task];entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read;ext4_file_read_iter "
	"[ext4];leaf 6\n"
	"sh;[pid 42];[task];entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write 5\n"
	"sh;[pid 42];[user] 1\n"
	"0x55d0c0de1000;0x7f0012345678;entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read 4\n"
	"[truncated];rec;rec;leaf 2\n"
	"[collapsed 3];hs_workload_write [hs_workload];hs_rec_a [hs_workload];hs_leaf "
	"[hs_workload] 7\n"
	"[softirq];[unknown] 0\n"
	"[dropped];[table full] 5\n"
	"[dropped];[nested] 1\n";

static void load_golden(struct hs_profile *p)
{
	size_t bad = 0;

	memset(p, 0, sizeof(*p));
	assert_int_equal(hs_profile_parse(p, golden, &bad), 0);
	assert_int_equal(bad, 0);
	p->event = "cpu-clock";
	snprintf(p->rate, sizeof(p->rate), "1000 Hz");
	p->seconds = 2.5;
	p->filtered = 17;
}

static char *folded_of(const struct hs_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(hs_write_folded(f, p), 0);
	fclose(f);
	return buf;
}

/* Write @p as pprof to @path with the same writer record and report use. */
static void write_pprof(const char *path, const struct hs_profile *p)
{
	int fd = dup(2);

	freopen("/dev/null", "w", stderr);
	assert_int_equal(hs_write_profile("test", path, HS_FMT_PPROF, p, NULL), 0);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
}

static void roundtrip_is_exact(void **state)
{
	struct hs_profile p, q = { 0 };
	const char *path = scratch("golden.pb.gz");
	char err[256], *text, *raw;
	size_t len;

	(void)state;
	load_golden(&p);
	write_pprof(path, &p);
	raw = read_file(path, &len);
	assert_non_null(raw);
	assert_true(len > 20 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
	free(raw);
	assert_int_equal(hs_profile_load(&q, path, err, sizeof(err)), 0);
	text = folded_of(&q);
	assert_string_equal(text, golden_merged);
	free(text);
	/* The facts and what recorded it come back too. */
	assert_int_equal(p.nr, 9);
	assert_int_equal(q.nr, p.nr);
	assert_int_equal(q.total, 31);
	assert_int_equal(q.total, p.total);
	assert_int_equal(q.dropped, 6);
	assert_int_equal(q.truncated, 2);
	assert_int_equal(q.collapsed, 7);
	assert_int_equal(q.filtered, 17);
	assert_non_null(q.event);
	assert_string_equal(q.event, "cpu-clock");
	assert_string_equal(q.rate, "1000 Hz");
	assert_true(q.seconds > 2.49 && q.seconds < 2.51);
	hs_profile_free(&q);

	/* And again through the command line: report converts both ways. */
	write_file(scratch("golden.folded"), golden, strlen(golden));
	assert_int_equal(run_tool("hotstack", "report", scratch("golden.folded"), "-o",
				  scratch("cli.pb.gz"), NULL), 0);
	assert_int_equal(run_tool("hotstack", "report", scratch("cli.pb.gz"), "-o",
				  scratch("back.folded"), NULL), 0);
	text = read_file(scratch("back.folded"), NULL);
	assert_string_equal(text, golden_merged);
	free(text);
	assert_int_equal(run_tool("hotstack", "report", scratch("cli.pb.gz"), NULL), 0);
	assert_non_null(strstr(tool_out, "# samples: 31, counted: 25, dropped: 6\n"));
	assert_non_null(strstr(tool_out, "#   dropped, [table full]: 5\n"));
	assert_non_null(strstr(tool_out, "# truncated stacks (deeper than --max-depth): "
				  "2 samples"));
	hs_profile_free(&p);
}

/* The gunzipped protobuf of @path, decoded by protobuf-c. */
static const Perftools__Profiles__Location *location_of(const Perftools__Profiles__Profile *prof,
							 const char *name)
{
	const Perftools__Profiles__Location *found = NULL;
	size_t i, j;

	for (i = 0; i < prof->n_location; i++) {
		const Perftools__Profiles__Location *l = prof->location[i];

		assert_int_equal(l->n_line, 1);
		for (j = 0; j < prof->n_function; j++)
			if (prof->function[j]->id == l->line[0]->function_id &&
			    !strcmp(str(prof, prof->function[j]->name), name)) {
				assert_null(found);	/* one location per frame name */
				found = l;
			}
	}
	assert_non_null(found);
	return found;
}

static void protobuf_content(void **state)
{
	const Perftools__Profiles__Location *l;
	Perftools__Profiles__Profile *prof;
	struct hs_profile p;
	const char *path = scratch("content.pb.gz");
	size_t i, comments = 0;
	int64_t total = 0;

	(void)state;
	load_golden(&p);
	write_pprof(path, &p);
	prof = decode(path);
	assert_non_null(prof);
	assert_string_equal(prof->string_table[0], "");
	/* cpu-clock at 1000 Hz: samples and CPU time, 1 ms a sample. */
	assert_int_equal(prof->n_sample_type, 2);
	assert_string_equal(str(prof, prof->sample_type[0]->type), "samples");
	assert_string_equal(str(prof, prof->sample_type[0]->unit), "count");
	assert_string_equal(str(prof, prof->sample_type[1]->type), "cpu");
	assert_string_equal(str(prof, prof->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(str(prof, prof->period_type->type), "cpu");
	assert_int_equal(prof->period, 1000000);
	assert_int_equal(prof->duration_nanos, 2500000000LL);
	assert_int_equal(prof->n_sample, 9);
	for (i = 0; i < prof->n_sample; i++) {
		assert_int_equal(prof->sample[i]->n_value, 2);
		assert_int_equal(prof->sample[i]->value[1], prof->sample[i]->value[0] * 1000000);
		total += prof->sample[i]->value[0];
	}
	assert_int_equal(total, 31);
	/*
	 * One function and location per distinct frame: 21 of them. The keys
	 * (sh, [pid 42], [task], [softirq]) are labels, not frames.
	 */
	assert_int_equal(prof->n_function, 21);
	assert_int_equal(prof->n_location, 21);
	for (i = 0; i < prof->n_function; i++) {
		assert_string_not_equal(str(prof, prof->function[i]->name), "sh");
		assert_string_not_equal(str(prof, prof->function[i]->name), "[pid 42]");
		assert_string_not_equal(str(prof, prof->function[i]->name), "[task]");
	}
	/* The first sample's leaf comes first, its outermost frame last. */
	assert_int_equal(prof->sample[0]->n_location_id, 6);
	assert_int_equal(prof->sample[0]->location_id[0], location_of(prof, "leaf")->id);
	assert_int_equal(prof->sample[0]->location_id[5],
			 location_of(prof, "entry_SYSCALL_64")->id);
	/* Its labels: comm and context strings, pid a number. */
	assert_int_equal(prof->sample[0]->n_label, 3);
	assert_string_equal(str(prof, prof->sample[0]->label[0]->key), "comm");
	assert_string_equal(str(prof, prof->sample[0]->label[0]->str), "sh");
	assert_string_equal(str(prof, prof->sample[0]->label[1]->key), "pid");
	assert_int_equal(prof->sample[0]->label[1]->num, 42);
	assert_string_equal(str(prof, prof->sample[0]->label[2]->key), "context");
	assert_string_equal(str(prof, prof->sample[0]->label[2]->str), "task");
	/* "[softirq];[unknown] 0": a context, no process. */
	assert_int_equal(prof->sample[6]->n_label, 1);
	assert_string_equal(str(prof, prof->sample[6]->label[0]->str), "softirq");
	assert_int_equal(prof->sample[8]->n_label, 0);	/* [dropped] */
	/* Mappings: kernel frames, user addresses, markers in none. */
	assert_int_equal(prof->n_mapping, 2);
	assert_string_equal(str(prof, prof->mapping[0]->filename), "[kernel.kallsyms]");
	assert_int_equal(location_of(prof, "vfs_read")->mapping_id, prof->mapping[0]->id);
	assert_int_equal(location_of(prof, "hs_leaf [hs_workload]")->mapping_id,
			 prof->mapping[0]->id);
	l = location_of(prof, "0x7f0012345678");
	assert_string_equal(str(prof, prof->mapping[1]->filename), "[user]");
	assert_int_equal(l->mapping_id, prof->mapping[1]->id);
	assert_int_equal(l->address, 0x7f0012345678ULL);
	assert_int_equal(location_of(prof, "[dropped]")->mapping_id, 0);
	assert_int_equal(location_of(prof, "[table full]")->mapping_id, 0);
	/* The totals in comments. */
	for (i = 0; i < prof->n_comment; i++) {
		const char *c = str(prof, prof->comment[i]);

		comments += !strcmp(c, "hotstack samples: 31") + !strcmp(c, "hotstack dropped: 6") +
			    !strcmp(c, "hotstack filtered: 17") +
			    !strcmp(c, "hotstack truncated: 2") +
			    !strcmp(c, "hotstack collapsed: 7") +
			    !strcmp(c, "hotstack event: cpu-clock");
	}
	assert_int_equal(comments, 6);
	perftools__profiles__profile__free_unpacked(prof, NULL);

	/* An event at a fixed period counts events; a file's profile only samples. */
	p.event = "page-faults";
	snprintf(p.rate, sizeof(p.rate), "period 10");
	write_pprof(path, &p);
	prof = decode(path);
	assert_int_equal(prof->n_sample_type, 2);
	assert_string_equal(str(prof, prof->sample_type[1]->type), "page-faults");
	assert_string_equal(str(prof, prof->sample_type[1]->unit), "count");
	assert_int_equal(prof->period, 10);
	assert_int_equal(prof->sample[0]->value[1], 60);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	p.event = NULL;
	write_pprof(path, &p);
	prof = decode(path);
	assert_int_equal(prof->n_sample_type, 1);
	assert_int_equal(prof->sample[0]->n_value, 1);
	assert_int_equal(prof->sample[0]->value[0], 6);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	hs_profile_free(&p);
}

/* Skip blanks, then one word; the word's number (units like "ms" ignored). */
static double word(const char **s)
{
	double v;
	char *end;

	while (**s == ' ')
		(*s)++;
	v = strtod(*s, &end);
	*s = end;
	while (**s && **s != ' ' && **s != '\n')
		(*s)++;
	return v;
}

/*
 * go tool pprof -top's lines: "flat flat% sum% cum cum% name"; the flat
 * and cum of @name, numbers without their unit. Fails if the line is missing.
 */
static void top_line(const char *top, const char *name, double *flat, double *cum)
{
	const char *line, *s;
	size_t n = strlen(name);

	for (line = top; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		s = line;
		*flat = word(&s);
		word(&s);
		word(&s);
		*cum = word(&s);
		word(&s);
		if (s[0] == ' ' && s[1] == ' ' && !strncmp(s + 2, name, n) &&
		    (s[2 + n] == '\n' || !s[2 + n]))
			return;
	}
	fail_msg("go tool pprof -top has no line for '%s'", name);
}

/* Debian's go tool pprof reads the profile: functions, counts and CPU time. */
static void go_tool_pprof_reads_it(void **state)
{
	const char *path = scratch("go.pb.gz"), *out = scratch("go.txt");
	struct hs_profile p;
	double flat, cum;
	char cmd[512], *top;

	(void)state;
	load_golden(&p);
	write_pprof(path, &p);
	hs_profile_free(&p);
	/* No go: this fails (tests/deps.sh installs golang-go). */
	snprintf(cmd, sizeof(cmd), "HOME=${HOME:-/tmp} go tool pprof -top -sample_index=samples "
		 "'%s' >'%s' 2>&1", path, out);
	assert_int_equal(system(cmd), 0);
	top = read_file(out, NULL);
	assert_non_null(strstr(top, "Type: samples"));
	assert_non_null(strstr(top, "Showing nodes accounting for 31, 100% of 31 total"));
	top_line(top, "leaf", &flat, &cum);
	assert_true(flat == 8 && cum == 8);
	top_line(top, "vfs_read", &flat, &cum);
	assert_true(flat == 4 && cum == 10);
	top_line(top, "vfs_write", &flat, &cum);
	assert_true(flat == 5 && cum == 5);
	top_line(top, "do_syscall_64", &flat, &cum);
	assert_true(flat == 0 && cum == 15);
	top_line(top, "hs_leaf [hs_workload]", &flat, &cum);
	assert_true(flat == 7 && cum == 7);
	top_line(top, "[table full]", &flat, &cum);
	assert_true(flat == 5 && cum == 5);
	top_line(top, "[dropped]", &flat, &cum);
	assert_true(flat == 0 && cum == 6);
	top_line(top, "0x7f0012345678", &flat, &cum);
	assert_true(flat == 0 && cum == 4);
	/* The comments carry the lossy facts. */
	assert_non_null(strstr(top, "hotstack dropped: 6"));
	assert_non_null(strstr(top, "hotstack filtered: 17"));
	/* A process name is not a function. */
	assert_null(strstr(top, "  sh\n"));
	free(top);
	/* It is a label: -tags lists it, -tagfocus selects its samples (6 + 5 + 1). */
	snprintf(cmd, sizeof(cmd), "HOME=${HOME:-/tmp} go tool pprof -tags '%s' >'%s' 2>&1",
		 path, out);
	assert_int_equal(system(cmd), 0);
	top = read_file(out, NULL);
	assert_non_null(strstr(top, " comm: Total 12.0\n"));
	assert_non_null(strstr(top, "12.0 (  100%): sh\n"));
	assert_non_null(strstr(top, " pid: Total 12.0\n"));
	assert_non_null(strstr(top, "): task\n"));
	free(top);
	snprintf(cmd, sizeof(cmd), "HOME=${HOME:-/tmp} go tool pprof -top -sample_index=samples "
		 "-tagfocus=comm=sh '%s' >'%s' 2>&1", path, out);
	assert_int_equal(system(cmd), 0);
	top = read_file(out, NULL);
	assert_non_null(strstr(top, "Showing nodes accounting for 12, 38.71% of 31 total"));
	free(top);
	/* CPU time: 1 ms a sample at 1000 Hz. */
	snprintf(cmd, sizeof(cmd), "HOME=${HOME:-/tmp} go tool pprof -top -sample_index=cpu "
		 "-unit=ms '%s' >'%s' 2>&1", path, out);
	assert_int_equal(system(cmd), 0);
	top = read_file(out, NULL);
	assert_non_null(strstr(top, "Type: cpu"));
	top_line(top, "leaf", &flat, &cum);
	assert_true(flat == 8 && cum == 8);
	top_line(top, "do_syscall_64", &flat, &cum);
	assert_true(flat == 0 && cum == 15);
	free(top);
}

/*
 * A profile another tool wrote: ids out of order, an inlined function (two
 * lines in one location), a location with only an address, and the count
 * as the second sample type. Not gzipped: the NUL byte tells it from text.
 */
static void foreign_profile(void **state)
{
	char *strs[] = { "", "cpu", "nanoseconds", "samples", "count", "main", "outer",
			 "inlined", "other" };
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						 PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	Perftools__Profiles__ValueType *vtp[2] = { &vt[0], &vt[1] };
	Perftools__Profiles__Function fn[4];
	Perftools__Profiles__Function *fnp[4] = { &fn[0], &fn[1], &fn[2], &fn[3] };
	Perftools__Profiles__Line ln[4], *lnp[4] = { &ln[0], &ln[1], &ln[2], &ln[3] };
	Perftools__Profiles__Location loc[4];
	Perftools__Profiles__Location *locp[4] = { &loc[0], &loc[1], &loc[2], &loc[3] };
	Perftools__Profiles__Sample s[2];
	Perftools__Profiles__Sample *sp[2] = { &s[0], &s[1] };
	uint64_t ids0[] = { 30, 20, 10 }, ids1[] = { 40, 10 };
	int64_t v0[] = { 3000, 3 }, v1[] = { 2000, 2 };
	const char *path = scratch("foreign.pb");
	struct hs_profile p = { 0 };
	uint8_t buf[4096];
	char err[256], *text;
	size_t len, i;

	(void)state;
	vt[0].type = 1;
	vt[0].unit = 2;
	vt[1].type = 3;
	vt[1].unit = 4;
	for (i = 0; i < 4; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = 100 + i;
		fn[i].name = 5 + i;
		perftools__profiles__line__init(&ln[i]);
		ln[i].function_id = 100 + i;
		perftools__profiles__location__init(&loc[i]);
	}
	/* 10: main; 20: outer with inlined in it (line[0] innermost); 30: an address. */
	loc[0].id = 10;
	loc[0].line = &lnp[0];
	loc[0].n_line = 1;
	loc[1].id = 20;
	lnp[1] = &ln[2];
	lnp[2] = &ln[1];
	loc[1].line = &lnp[1];
	loc[1].n_line = 2;
	loc[2].id = 30;
	loc[2].address = 0xdead;
	loc[3].id = 40;
	loc[3].line = &lnp[3];
	loc[3].n_line = 1;
	for (i = 0; i < 2; i++)
		perftools__profiles__sample__init(&s[i]);
	s[0].location_id = ids0;
	s[0].n_location_id = 3;
	s[0].value = v0;
	s[0].n_value = 2;
	s[1].location_id = ids1;
	s[1].n_location_id = 2;
	s[1].value = v1;
	s[1].n_value = 2;
	prof.sample_type = vtp;
	prof.n_sample_type = 2;
	prof.sample = sp;
	prof.n_sample = 2;
	prof.location = locp;
	prof.n_location = 4;
	prof.function = fnp;
	prof.n_function = 4;
	prof.string_table = strs;
	prof.n_string_table = 9;
	prof.duration_nanos = 1500000000;
	len = perftools__profiles__profile__pack(&prof, buf);
	assert_true(len < sizeof(buf));
	write_file(path, buf, len);
	assert_int_equal(hs_profile_load(&p, path, err, sizeof(err)), 0);
	text = folded_of(&p);
	assert_string_equal(text, "main;outer;inlined;0xdead 3\nmain;other 2\n");
	free(text);
	assert_null(p.event);
	assert_true(p.seconds > 1.49 && p.seconds < 1.51);
	hs_profile_free(&p);
}

static void broken_files_say_why(void **state)
{
	static const unsigned char not_pprof[] = { 0x0a, 0xff, 0x00, 0x12, 0x34 };
	static const unsigned char bad_gzip[] = { 0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03 };
	struct hs_profile p = { 0 };
	char err[256], *whole;
	size_t len;

	(void)state;
	assert_int_equal(hs_profile_load(&p, scratch("nope.pb.gz"), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "cannot open "));
	assert_non_null(strstr(err, "nope.pb.gz: No such file or directory"));
	write_file(scratch("bin.pb"), not_pprof, sizeof(not_pprof));
	assert_int_equal(hs_profile_load(&p, scratch("bin.pb"), err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "bin.pb: neither a pprof profile"));
	write_file(scratch("bad.pb.gz"), bad_gzip, sizeof(bad_gzip));
	assert_int_equal(hs_profile_load(&p, scratch("bad.pb.gz"), err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "bad.pb.gz: corrupt or truncated gzip data"));
	/* A profile cut in half. */
	load_golden(&p);
	write_pprof(scratch("whole.pb.gz"), &p);
	hs_profile_free(&p);
	whole = read_file(scratch("whole.pb.gz"), &len);
	write_file(scratch("cut.pb.gz"), whole, len / 2);
	free(whole);
	assert_int_equal(hs_profile_load(&p, scratch("cut.pb.gz"), err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "cut.pb.gz: corrupt or truncated gzip data"));
	assert_int_equal(hs_profile_load(&p, scratch_dir, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "Is a directory"));
	/* The command says it too, and fails with 1 (not a usage error). */
	assert_int_equal(run_tool("hotstack", "report", scratch("bad.pb.gz"), NULL), 1);
	assert_non_null(strstr(tool_out, "hotstack report: cannot read "));
	assert_non_null(strstr(tool_out, "corrupt or truncated gzip data"));
	hs_profile_free(&p);
}

/* Parse hotstack record's arguments, stderr silenced. */
static int record_parse(struct hs_record_opts *o, const char *a, const char *b)
{
	char *argv[] = { "record", (char *)a, (char *)b, NULL };
	int ret, saved = dup(2);

	freopen("/dev/null", "w", stderr);
	ret = hs_record_parse(3, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return ret;
}

static void pprof_on_the_command_line(void **state)
{
	struct hs_record_opts o;

	(void)state;
	assert_int_equal(hs_format_of_name("x.pb.gz"), HS_FMT_PPROF);
	assert_int_equal(hs_format_of_name(".pb.gz"), -1);
	assert_int_equal(hs_format_of_name("x.pb"), -1);
	assert_int_equal(record_parse(&o, "--format", "pprof"), 0);
	assert_int_equal(o.format, HS_FMT_PPROF);
	assert_int_equal(record_parse(&o, "-o", "k.pb.gz"), 0);
	assert_int_equal(o.format, HS_FMT_PPROF);
	assert_int_equal(record_parse(&o, "--format", "pprof2"), HS_EXIT_USAGE);
	assert_int_equal(run_tool("hotstack", "record", "--format", "proto", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "--format wants folded, report, json, svg, pprof or otlp, "
				  "not 'proto'"));
	assert_int_equal(run_tool("hotstack", "report", scratch("x.folded"), "-o", "x.pprof", NULL),
			 HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack report: cannot tell the format of 'x.pprof' "
				  "from its name: use .folded, .txt, .json, .svg, .pb.gz or .otlp.pb, "
				  "or --format"));
	assert_int_equal(run_tool("hotstack", "dump", "-o", "x.pb", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack dump: cannot tell the format of 'x.pb' "
				  "from its name: use .folded, .txt, .json, .svg, .pb.gz or .otlp.pb, "
				  "or --format"));
}

static int teardown(void **state)
{
	(void)state;
	scratch_remove();
	return 0;
}

/* @len bytes of text through hs_gzip_write(): its gzip size, and the data back whole. */
static size_t gzip_size(size_t len)
{
	char *in = malloc(len), *gz = NULL, *back = malloc(len + 1);
	size_t gz_len = 0, i;
	uLongf back_len = len + 1;
	z_stream z = { 0 };
	FILE *f;

	assert_non_null(in);
	assert_non_null(back);
	for (i = 0; i < len; i++)
		in[i] = "do_syscall_64;vfs_read;"[i % 23];
	f = open_memstream(&gz, &gz_len);
	assert_non_null(f);
	assert_int_equal(hs_gzip_write(f, in, len), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = gz_len;
	z.next_out = (Bytef *)back;
	z.avail_out = back_len;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, len);
	assert_memory_equal(back, in, len);
	inflateEnd(&z);
	free(in);
	free(back);
	free(gz);
	return gz_len;
}

/*
 * Under a page, stored (a file takes a page anyway; deflate's trees cost
 * more than the profile's making): gzip's 18 bytes and a stored block's 5
 * over the data. From a page on, compressed.
 */
static void gzip_small_stored(void **state)
{
	(void)state;
	assert_int_equal(gzip_size(1000), 1000 + 18 + 5);
	assert_int_equal(gzip_size(HS_GZIP_STORED - 1), HS_GZIP_STORED - 1 + 18 + 5);
	assert_true(gzip_size(HS_GZIP_STORED) < HS_GZIP_STORED / 4);
	assert_true(gzip_size(1 << 20) < (1 << 20) / 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip_is_exact),
		cmocka_unit_test(protobuf_content),
		cmocka_unit_test(go_tool_pprof_reads_it),
		cmocka_unit_test(foreign_profile),
		cmocka_unit_test(broken_files_say_why),
		cmocka_unit_test(pprof_on_the_command_line),
		cmocka_unit_test(gzip_small_stored),
	};

	return cmocka_run_group_tests_name("pprof", tests, NULL, teardown);
}
