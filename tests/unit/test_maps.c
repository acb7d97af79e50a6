// SPDX-License-Identifier: GPL-2.0
/*
 * The binaries frames came from (maps.h): build IDs read from synthetic
 * ELF notes files, the pprof writer's mappings (decoded, and as Debian's
 * go tool pprof -raw shows them), read back and written again, and the
 * flame graph colouring the user frames the tool named as user frames.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "commands.h"
#include "maps.h"
#include "output.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "pprof_decode.h"
#include "record.h"
#include "tool.h"

#define KERNEL_ID	"0123456789abcdef0123456789abcdef01234567"
#define MODULE_ID	"89abcdef89abcdef89abcdef89abcdef89abcdef"
#define PROG_ID		"feedfacefeedfacefeedfacefeedfacefeedface"
#define LIBC_ID		"c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
#define UNUSED_ID	"0badf00d0badf00d0badf00d0badf00d0badf00d"

/* One ELF note (native byte order) at @p: name, type, descriptor, padded to 4. */
static size_t put_note(unsigned char *p, const char *name, uint32_t type, const void *desc,
		       uint32_t descsz)
{
	uint32_t namesz = strlen(name) + 1, h[3] = { namesz, descsz, type };
	size_t n = sizeof(h);

	memcpy(p, h, sizeof(h));
	memcpy(p + n, name, namesz);
	n += (namesz + 3) & ~3U;
	memcpy(p + n, desc, descsz);
	return n + ((descsz + 3) & ~3U);
}

/* A notes file as /sys/kernel/notes has it: other notes around the build ID. */
static size_t notes_blob(unsigned char *buf, const char *hex)
{
	unsigned char id[64];
	size_t n = 0, i, len = strlen(hex) / 2;

	memset(buf, 0, 512);
	for (i = 0; i < len; i++)
		sscanf(hex + 2 * i, "%2hhx", &id[i]);
	n += put_note(buf + n, "Xen", 1, "abc", 3);
	n += put_note(buf + n, "GNU", 3, id, len);	/* NT_GNU_BUILD_ID */
	n += put_note(buf + n, "Linux", 0x100, "\1\1\0\0", 4);
	return n;
}

static void build_id_from_notes(void **state)
{
	unsigned char buf[512];
	char hex[2 * HS_BUILD_ID_MAX + 1];
	size_t n;

	(void)state;
	n = notes_blob(buf, KERNEL_ID);
	write_file(scratch("notes"), buf, n);
	assert_int_equal(hs_build_id_notes(scratch("notes"), hex), 0);
	assert_string_equal(hex, KERNEL_ID);
	/* A shorter (MD5-sized) build ID, the only note. */
	n = put_note(buf, "GNU", 3, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e"
		     "\x0f\x10", 16);
	write_file(scratch("notes16"), buf, n);
	assert_int_equal(hs_build_id_notes(scratch("notes16"), hex), 0);
	assert_string_equal(hex, "0102030405060708090a0b0c0d0e0f10");
	/* No build ID note: a GNU note of another type, a build ID type of another name. */
	n = put_note(buf, "GNU", 1, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	n += put_note(buf + n, "Xen", 3, "\1\2\3\4", 4);
	write_file(scratch("notes-none"), buf, n);
	assert_int_equal(hs_build_id_notes(scratch("notes-none"), hex), -ENOENT);
	assert_string_equal(hex, "");
	/* Cut short in the build ID's descriptor, empty, missing. */
	n = notes_blob(buf, KERNEL_ID);
	write_file(scratch("notes-cut"), buf, 12 + 4 + 28 + 8);
	assert_int_equal(hs_build_id_notes(scratch("notes-cut"), hex), -ENOENT);
	write_file(scratch("notes-empty"), buf, 0);
	assert_int_equal(hs_build_id_notes(scratch("notes-empty"), hex), -ENOENT);
	assert_int_equal(hs_build_id_notes(scratch("no-such-notes"), hex), -ENOENT);
}

/* The kernel's mapping and its modules' from a synthetic sysfs tree. */
static void kernel_and_modules(void **state)
{
	struct hs_profile p = { 0 };
	unsigned char buf[512];
	const struct hs_maps *m;
	char dir[256];
	long i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s", scratch("sys"));
	mkdir(dir, 0755);
	mkdir(scratch("sys/kernel"), 0755);
	mkdir(scratch("sys/module"), 0755);
	mkdir(scratch("sys/module/hs_workload"), 0755);
	mkdir(scratch("sys/module/hs_workload/notes"), 0755);
	write_file(scratch("sys/kernel/notes"), buf, notes_blob(buf, KERNEL_ID));
	write_file(scratch("sys/module/hs_workload/notes/.note.gnu.build-id"), buf,
		   put_note(buf, "GNU", 3, "\x89\xab\xcd\xef", 4));
	assert_int_equal(hs_profile_parse(&p, "sh;[pid 1];hs_workload_write [hs_workload];"
					  "hs_leaf [hs_workload] 3\n"
					  "sh;[pid 1];vfs_read;ext4_file_read_iter [ext4] 2\n"
					  "[dropped];[table full] 1\n", NULL), 0);
	assert_int_equal(hs_maps_kernel(&p, dir), 0);
	m = p.maps;
	assert_non_null(m);
	assert_int_equal(m->nr, 3);
	i = hs_maps_find_file(m, HS_KERNEL_MAPPING, strlen(HS_KERNEL_MAPPING));
	assert_true(i >= 0);
	assert_string_equal(m->map[i].build_id, KERNEL_ID);
	i = hs_maps_find_file(m, "[hs_workload]", 13);
	assert_true(i >= 0);
	assert_string_equal(m->map[i].build_id, "89abcdef");
	/* A module without a readable notes file: its mapping, no build ID. */
	i = hs_maps_find_file(m, "[ext4]", 6);
	assert_true(i >= 0);
	assert_string_equal(m->map[i].build_id, "");
	/* Kernel frames are not user frames. */
	assert_true(hs_maps_find_frame(m, "vfs_read", 8) < 0);
	assert_true(hs_maps_find_frame(m, "hs_leaf [hs_workload]", 21) < 0);
	hs_profile_free(&p);
}

/* Kernel, module and user frames symbolized by the tool, and a hex one. */
static const char stacks[] =
	"prog;[pid 7];_start;main;work;entry_SYSCALL_64;do_syscall_64;ksys_read;"
	"hs_leaf [hs_workload] 5\n"
	"prog;[pid 7];_start;main;memcpy;entry_SYSCALL_64;memcpy 3\n"
	"prog;[pid 7];_start;main;0x7f0000001000;write 2\n"
	"prog;[pid 7];[user] 1\n"
	"[dropped];[table full] 1\n";

/* @stacks with what record knows of their binaries. */
static void load_known(struct hs_profile *p)
{
	long prog, libc;

	memset(p, 0, sizeof(*p));
	assert_int_equal(hs_profile_parse(p, stacks, NULL), 0);
	p->event = "cpu-clock";
	snprintf(p->rate, sizeof(p->rate), "1000 Hz");
	p->seconds = 1;
	assert_true(hs_maps_add(&p->maps, HS_KERNEL_MAPPING, KERNEL_ID, 0, 0, 0) >= 0);
	assert_true(hs_maps_add(&p->maps, "[hs_workload]", MODULE_ID, 0, 0, 0) >= 0);
	/* Binaries and modules no frame is in (another group's): not written. */
	assert_true(hs_maps_add(&p->maps, "[hs_unused]", UNUSED_ID, 0, 0, 0) >= 0);
	prog = hs_maps_add(&p->maps, "/usr/bin/prog", PROG_ID, 0x400000, 0x402000, 0);
	assert_true(hs_maps_add(&p->maps, "/usr/lib/unused.so", UNUSED_ID, 0x10000, 0x20000, 0) >= 0);
	libc = hs_maps_add(&p->maps, "/lib/libc.so.6", LIBC_ID, 0x7f0000000000, 0x7f0000200000, 0);
	assert_true(prog >= 0 && libc >= 0);
	/* The same file and build ID again: the same mapping. */
	assert_int_equal(hs_maps_add(&p->maps, "/usr/bin/prog", PROG_ID, 0, 0, 0), prog);
	assert_int_equal(hs_maps_frame(p->maps, "_start", 6, prog), 0);
	assert_int_equal(hs_maps_frame(p->maps, "main", 4, prog), 0);
	assert_int_equal(hs_maps_frame(p->maps, "work", 4, prog), 0);
	assert_int_equal(hs_maps_frame(p->maps, "memcpy", 6, libc), 0);
	/* The first binary a name was found in wins. */
	assert_int_equal(hs_maps_frame(p->maps, "memcpy", 6, prog), 0);
	assert_int_equal(hs_maps_find_frame(p->maps, "memcpy", 6), libc);
}

static const Perftools__Profiles__Mapping *mapping_of(const Perftools__Profiles__Profile *prof,
						      const char *file)
{
	size_t i;

	for (i = 0; i < prof->n_mapping; i++)
		if (!strcmp(str(prof, prof->mapping[i]->filename), file))
			return prof->mapping[i];
	fail_msg("no mapping %s", file);
	return NULL;
}

/* The mapping id of the location of frame @name. */
static uint64_t mapping_id_of(const Perftools__Profiles__Profile *prof, const char *name)
{
	size_t i, j;

	for (i = 0; i < prof->n_location; i++)
		for (j = 0; j < prof->n_function; j++)
			if (prof->function[j]->id == prof->location[i]->line[0]->function_id &&
			    !strcmp(str(prof, prof->function[j]->name), name))
				return prof->location[i]->mapping_id;
	fail_msg("no location %s", name);
	return 0;
}

/* What the writer must give for load_known()'s profile, read back or not. */
static void check_mappings(const char *path)
{
	Perftools__Profiles__Profile *prof = decode(path);
	const Perftools__Profiles__Mapping *k, *mod, *prog, *libc, *user;
	size_t i;

	assert_non_null(prof);
	assert_int_equal(prof->n_mapping, 5);
	k = mapping_of(prof, HS_KERNEL_MAPPING);
	user = mapping_of(prof, "[user]");
	mod = mapping_of(prof, "[hs_workload]");
	prog = mapping_of(prof, "/usr/bin/prog");
	libc = mapping_of(prof, "/lib/libc.so.6");
	assert_int_equal(k->id, 1);
	assert_int_equal(user->id, 2);
	/* The others numbered on from 3, in order, none left out between. */
	assert_int_equal(mod->id, 3);
	assert_int_equal(prog->id, 4);
	assert_int_equal(libc->id, 5);
	for (i = 0; i < prof->n_string_table; i++)
		assert_null(strstr(prof->string_table[i], "unused"));
	assert_string_equal(str(prof, k->build_id), KERNEL_ID);
	assert_string_equal(str(prof, user->build_id), "");
	assert_string_equal(str(prof, mod->build_id), MODULE_ID);
	assert_string_equal(str(prof, prog->build_id), PROG_ID);
	assert_int_equal(prog->memory_start, 0x400000);
	assert_int_equal(prog->memory_limit, 0x402000);
	assert_string_equal(str(prof, libc->build_id), LIBC_ID);
	assert_int_equal(mapping_id_of(prof, "do_syscall_64"), k->id);
	assert_int_equal(mapping_id_of(prof, "hs_leaf [hs_workload]"), mod->id);
	assert_int_equal(mapping_id_of(prof, "main"), prog->id);
	assert_int_equal(mapping_id_of(prof, "_start"), prog->id);
	assert_int_equal(mapping_id_of(prof, "memcpy"), libc->id);
	assert_int_equal(mapping_id_of(prof, "0x7f0000001000"), user->id);
	assert_int_equal(mapping_id_of(prof, "[user]"), 0);
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

static void pprof_mappings(void **state)
{
	const char *path = scratch("maps.pb.gz"), *out = scratch("raw.txt");
	struct hs_profile p, q = { 0 };
	char cmd[512], err[256], *raw, *text;

	(void)state;
	load_known(&p);
	assert_int_equal(hs_write_profile("test", path, HS_FMT_PPROF, &p, NULL), 0);
	check_mappings(path);
	/* Debian's go tool pprof shows each mapping with its file and build ID. */
	snprintf(cmd, sizeof(cmd), "HOME=${HOME:-/tmp} go tool pprof -raw '%s' >'%s' 2>&1",
		 path, out);
	assert_int_equal(system(cmd), 0);
	raw = read_file(out, NULL);
	assert_non_null(raw);
	assert_non_null(strstr(raw, "[kernel.kallsyms] " KERNEL_ID));
	assert_non_null(strstr(raw, "[hs_workload] " MODULE_ID));
	assert_non_null(strstr(raw, "0x400000/0x402000/0x0 /usr/bin/prog " PROG_ID));
	assert_non_null(strstr(raw, "/lib/libc.so.6 " LIBC_ID));
	free(raw);

	/* Read back: the same lines and mappings; written again: the same protobuf mappings. */
	assert_int_equal(hs_profile_load(&q, path, err, sizeof(err)), 0);
	text = NULL;
	{
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_int_equal(hs_write_folded(f, &q), 0);
		fclose(f);
	}
	assert_string_equal(text, stacks);
	free(text);
	assert_non_null(q.maps);
	assert_int_equal(hs_maps_find_frame(q.maps, "main", 4),
			 hs_maps_find_file(q.maps, "/usr/bin/prog", 13));
	assert_int_equal(hs_maps_find_frame(q.maps, "memcpy", 6),
			 hs_maps_find_file(q.maps, "/lib/libc.so.6", 14));
	assert_true(hs_maps_find_frame(q.maps, "do_syscall_64", 13) < 0);
	assert_true(hs_maps_find_frame(q.maps, "hs_leaf [hs_workload]", 21) < 0);
	assert_true(hs_maps_find_frame(q.maps, "0x7f0000001000", 14) < 0);
	assert_int_equal(hs_write_profile("test", scratch("again.pb.gz"), HS_FMT_PPROF, &q, NULL), 0);
	check_mappings(scratch("again.pb.gz"));
	hs_profile_free(&q);

	/* Through the command line: pprof -> pprof keeps them; the report lists them. */
	assert_int_equal(run_tool("hotstack", "report", path, "-o", scratch("cli.pb.gz"), NULL), 0);
	check_mappings(scratch("cli.pb.gz"));
	assert_int_equal(run_tool("hotstack", "report", scratch("cli.pb.gz"), NULL), 0);
	assert_non_null(strstr(tool_out, "# mapping: [kernel.kallsyms], build id " KERNEL_ID "\n"));
	assert_non_null(strstr(tool_out, "# mapping: /usr/bin/prog, build id " PROG_ID "\n"));
	/* Folded text knows no binaries: the two mappings of before, no build IDs. */
	write_file(scratch("maps.folded"), stacks, strlen(stacks));
	assert_int_equal(run_tool("hotstack", "report", scratch("maps.folded"), "-o",
				  scratch("plain.pb.gz"), NULL), 0);
	{
		Perftools__Profiles__Profile *prof = decode(scratch("plain.pb.gz"));

		assert_int_equal(prof->n_mapping, 2);
		assert_string_equal(str(prof, prof->mapping[0]->build_id), "");
		assert_int_equal(mapping_id_of(prof, "main"), 1);
		assert_int_equal(mapping_id_of(prof, "hs_leaf [hs_workload]"), 1);
		perftools__profiles__profile__free_unpacked(prof, NULL);
	}
	assert_int_equal(run_tool("hotstack", "report", scratch("plain.pb.gz"), NULL), 0);
	assert_null(strstr(tool_out, "# mapping:"));
	hs_profile_free(&p);
}

/*
 * python3: in the SVG at argv[1], every frame's fills by name; the user
 * frames in the user palette (blue-green), kernel ones warm, markers grey.
 * argv[2] lists the names that must be user frames.
 */
static const char svg_check[] =
	"import sys, re, xml.dom.minidom as m\n"
	"d = m.parse(sys.argv[1])\n"
	"fills = {}\n"
	"for g in d.getElementsByTagName('g'):\n"
	"    t = g.getElementsByTagName('title')[0].firstChild.data\n"
	"    f = g.getElementsByTagName('rect')[0].getAttribute('fill')\n"
	"    rgb = tuple(int(x) for x in re.match(r'rgb\\((\\d+),(\\d+),(\\d+)\\)$', f).groups())\n"
	"    fills.setdefault(t[:t.rindex(' (')], []).append(rgb)\n"
	"def user(c): return 60 <= c[0] < 120 and 160 <= c[1] < 220 and 180 <= c[2] < 230\n"
	"def kernel(c): return c[0] >= 220 and c[2] < 80\n"
	"def grey(c): return c[0] == c[1] == c[2]\n"
	"for n in sys.argv[2].split(','):\n"
	"    if n != 'memcpy':\n"
	"        assert all(user(c) for c in fills[n]), (n, fills[n])\n"
	"for n in ['entry_SYSCALL_64', 'do_syscall_64', 'write', 'hs_leaf [hs_workload]']:\n"
	"    assert all(kernel(c) for c in fills[n]), (n, fills[n])\n"
	"for n in ['[pid 7]', '[user]', '[dropped]']:\n"
	"    assert all(grey(c) for c in fills[n]), (n, fills[n])\n"
	"# memcpy: a user frame in libc, then a kernel frame after the user frames.\n"
	"if 'memcpy' in sys.argv[2]:\n"
	"    assert sorted(map(user, fills['memcpy'])) == [False, True], fills['memcpy']\n"
	"    assert any(kernel(c) for c in fills['memcpy']), fills['memcpy']\n";

static void svg_user_colours(void **state)
{
	struct hs_profile p;
	char cmd[512];

	(void)state;
	write_file(scratch("check.py"), svg_check, strlen(svg_check));
	load_known(&p);
	assert_int_equal(hs_write_profile("test", scratch("u.svg"), HS_FMT_SVG, &p, NULL), 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' _start,main,work,memcpy,0x7f0000001000",
		 scratch("check.py"), scratch("u.svg"));
	assert_int_equal(system(cmd), 0);
	/* From the pprof file, read back: the same colours. */
	assert_int_equal(hs_write_profile("test", scratch("u.pb.gz"), HS_FMT_PPROF, &p, NULL), 0);
	assert_int_equal(run_tool("hotstack", "report", scratch("u.pb.gz"), "-o",
				  scratch("u2.svg"), NULL), 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' _start,main,work,memcpy,0x7f0000001000",
		 scratch("check.py"), scratch("u2.svg"));
	assert_int_equal(system(cmd), 0);
	/* The check itself fails when a named user frame is drawn as a kernel one. */
	hs_maps_free(p.maps);
	p.maps = NULL;
	assert_int_equal(hs_write_profile("test", scratch("k.svg"), HS_FMT_SVG, &p, NULL), 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' main 2>/dev/null", scratch("check.py"),
		 scratch("k.svg"));
	assert_int_not_equal(system(cmd), 0);
	/* Without names known, hex addresses are still user frames, the rest kernel. */
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' 0x7f0000001000", scratch("check.py"),
		 scratch("k.svg"));
	assert_int_equal(system(cmd), 0);
	hs_profile_free(&p);
}

static int teardown(void **state)
{
	(void)state;
	scratch_remove();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_id_from_notes),
		cmocka_unit_test(kernel_and_modules),
		cmocka_unit_test(pprof_mappings),
		cmocka_unit_test(svg_user_colours),
	};

	return cmocka_run_group_tests_name("maps", tests, NULL, teardown);
}
