// SPDX-License-Identifier: GPL-2.0
/*
 * User symbols (libdwfl) from captured /proc/PID/maps: this test program's
 * own functions, and those of a program compiled here that exits before
 * its addresses are looked up, with the binary each name came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <signal.h>
#include <cmocka.h>
#include <elf.h>

#include "maps.h"
#include "usyms.h"

volatile int usyms_sink;

__attribute__((noinline)) void usyms_probe_fn(void)
{
	usyms_sink++;
}

/* Functions named as a C++ and a Rust compiler name them (asm labels). */
void usyms_cxx_fn(int x) __asm__("_ZN3foo6detail3barEi");
__attribute__((noinline)) void usyms_cxx_fn(int x)
{
	usyms_sink += x;
}

void usyms_rust_fn(void) __asm__("_ZN4core3fmt5write17h4bd0d2e29a2a2e6dE");
__attribute__((noinline)) void usyms_rust_fn(void)
{
	usyms_sink++;
}

void usyms_rust_v0_fn(void) __asm__("_RNvCs1234_7mycrate3foo");
__attribute__((noinline)) void usyms_rust_v0_fn(void)
{
	usyms_sink++;
}

/*
 * Code no symbol covers is named as perf names its binary, binary+0xOFFSET
 * (an address of the binary's own), never a bare address; the vDSO's
 * functions by their names, though a maps text does not give its image.
 */
static void unnamed_code_and_vdso(void **state)
{
	const Elf64_Ehdr *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct hs_usyms *u = hs_usyms_new();
	const char *s;
	size_t len, off;

	(void)state;
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	/* Its functions (clock_gettime's...) are named, somewhere in its first 8 KiB. */
	assert_non_null(vdso);
	for (off = 0; off < 8192; off += 16) {
		s = hs_usyms_lookup(u, getpid(), (uintptr_t)vdso + off, &len);
		if (s && len > 7 && !memcmp(s, "__vdso_", 7))
			break;
	}
	assert_true(off < 8192);
	/* Its ELF header: no function, the binary and the offset. */
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)vdso + 4, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen("[vdso]+0x4"));
	assert_memory_equal(s, "[vdso]+0x4", len);
	/* The test program's own ELF header (a PIE: its headers first), likewise. */
	s = hs_usyms_lookup(u, getpid(), getauxval(AT_PHDR) - sizeof(Elf64_Ehdr) + 8, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen("test_usyms+0x8"));
	assert_memory_equal(s, "test_usyms+0x8", len);
	hs_usyms_free(u);
}

/* JIT code: named from /tmp/perf-PID.map, as perf reads it. */
static void perf_map(void **state)
{
	char path[64];
	void *code = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hs_usyms *u = hs_usyms_new();
	const char *s;
	size_t len;
	FILE *f;

	(void)state;
	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%lx 40 LazyCompile:*fib;x.js:1\nnot a line\n%lx 10 other\n",
		(unsigned long)code + 0x100, (unsigned long)code + 0x1000);
	fclose(f);
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)code + 0x13f, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen("LazyCompile:*fib:x.js:1"));
	assert_memory_equal(s, "LazyCompile:*fib:x.js:1", len);
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)code + 0x1008, &len);
	assert_non_null(s);
	assert_memory_equal(s, "other", len);
	/* Past an entry, or where none is: unknown. */
	assert_null(hs_usyms_lookup(u, getpid(), (uintptr_t)code + 0x140, &len));
	assert_null(hs_usyms_lookup(u, getpid(), (uintptr_t)code + 0x80, &len));
	unlink(path);
	munmap(code, 8192);
	hs_usyms_free(u);
}

static void demangled(void **state)
{
	struct hs_usyms *u = hs_usyms_new();
	const struct hs_maps *m;
	const char *s;
	char *d;
	size_t len;

	(void)state;
	d = hs_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	assert_string_equal(d, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(d);
	assert_null(hs_demangle("vfs_read"));
	assert_null(hs_demangle("main"));
	/* Looked up in this program: the names a user reads, and their binary. */
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)usyms_cxx_fn + 1, &len);
	assert_non_null(s);
	assert_string_equal(s, "foo::detail::bar(int)");
	assert_int_equal(len, strlen("foo::detail::bar(int)"));
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)usyms_rust_fn + 1, &len);
	assert_non_null(s);
	assert_string_equal(s, "core::fmt::write");
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)usyms_rust_v0_fn + 1, &len);
	assert_non_null(s);
	assert_string_equal(s, "mycrate::foo");
	m = hs_usyms_maps(u);
	assert_true(hs_maps_find_frame(m, "foo::detail::bar(int)", 21) >= 0);
	assert_int_equal(hs_maps_find_frame(m, "_ZN3foo6detail3barEi", 20), -1);
	hs_usyms_free(u);
}

static void own_functions(void **state)
{
	struct hs_usyms *u = hs_usyms_new();
	uint64_t a = (uintptr_t)usyms_probe_fn;
	unsigned int builds;
	void *ro, *x;
	const char *s;
	size_t len;
	int fd;

	(void)state;
	assert_non_null(u);
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 1);
	s = hs_usyms_lookup(u, getpid(), a + 1, &len);
	assert_non_null(s);
	assert_string_equal(s, "usyms_probe_fn");
	assert_int_equal(len, strlen("usyms_probe_fn"));
	/* From the cache, the same. */
	assert_string_equal(hs_usyms_lookup(u, getpid(), a + 1, &len), "usyms_probe_fn");
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)own_functions + 4, &len);
	assert_non_null(s);
	assert_string_equal(s, "own_functions");
	/* A shared library's function, by its address in this process. */
	s = hs_usyms_lookup(u, getpid(), (uintptr_t)getppid + 1, &len);
	assert_non_null(s);
	assert_non_null(strstr(s, "getppid"));
	/* Nothing mapped there; a process never captured. */
	assert_null(hs_usyms_lookup(u, getpid(), 0x10, &len));
	assert_null(hs_usyms_lookup(u, 1u << 30, a, &len));
	/* The same mappings again: kept as they were. */
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), &builds), 2);
	assert_int_equal(builds, 1);
	assert_string_equal(hs_usyms_lookup(u, getpid(), a + 1, &len), "usyms_probe_fn");
	/*
	 * A file mapped to be read (as libelf maps the binaries the tool
	 * reads): the same executable mappings, the same symbols, not built
	 * again; an executable mapping more: built again.
	 */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(ro != MAP_FAILED);
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), &builds), 3);
	assert_int_equal(builds, 1);
	assert_string_equal(hs_usyms_lookup(u, getpid(), a + 1, &len), "usyms_probe_fn");
	x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(x != MAP_FAILED);
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), &builds), 4);
	assert_int_equal(builds, 2);
	assert_string_equal(hs_usyms_lookup(u, getpid(), a + 1, &len), "usyms_probe_fn");
	munmap(x, 4096);
	munmap(ro, 4096);
	close(fd);
	hs_usyms_free(u);
}

static const char program[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int hs_target_fn(int x) { return x * 3 + 1; }\n"
	"int main(void) {\n"
	"	char b;\n"
	"	printf(\"%p %p\\n\", (void *)hs_target_fn, (void *)main);\n"
	"	fflush(stdout);\n"
	"	return read(0, &b, 1) + hs_target_fn(1) - 4;\n"
	"}\n";

static void exited_process(void **state)
{
	char dir[] = "/tmp/hs-usyms-XXXXXX", src[64], bin[64], cmd[256], line[128], id[160];
	const struct hs_maps *m;
	long i;
	int to_child[2], from_child[2], status;
	unsigned long long fn, mainfn;
	struct hs_usyms *u;
	const char *s;
	size_t len;
	FILE *f;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/t.c", dir);
	snprintf(bin, sizeof(bin), "%s/t", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(program, f);
	fclose(f);
	/* A position-independent executable: its addresses depend on the mapping. */
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -fPIE -pie -Wl,--build-id=sha1 -o %s %s", bin, src);
	assert_int_equal(system(cmd), 0);
	/* Its build ID, as binutils reads it. */
	snprintf(cmd, sizeof(cmd), "readelf -n %s | sed -n 's/^ *Build ID: //p'", bin);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(id, sizeof(id), f));
	pclose(f);
	id[strcspn(id, "\n")] = '\0';
	assert_int_equal(strlen(id), 40);

	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		close(to_child[1]);
		close(from_child[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	f = fdopen(from_child[0], "r");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sscanf(line, "%llx %llx", &fn, &mainfn), 2);

	u = hs_usyms_new();
	assert_int_equal(hs_usyms_capture(u, pid), 0);
	/* Let it exit, and reap it: its /proc entry is gone. */
	close(to_child[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(hs_usyms_capture(u, pid), -ENOENT);
	assert_int_equal(hs_usyms_captured(u, pid, NULL), 1);
	/* Even the binary removed from disk: the capture opened it. */
	unlink(bin);
	s = hs_usyms_lookup(u, pid, fn + 2, &len);
	assert_non_null(s);
	assert_string_equal(s, "hs_target_fn");
	s = hs_usyms_lookup(u, pid, mainfn + 1, &len);
	assert_non_null(s);
	assert_string_equal(s, "main");
	/* Each name keeps its binary: path, build ID, where it was mapped. */
	m = hs_usyms_maps(u);
	assert_non_null(m);
	i = hs_maps_find_frame(m, "hs_target_fn", 12);
	assert_true(i >= 0);
	assert_int_equal(hs_maps_find_frame(m, "main", 4), i);
	assert_string_equal(m->map[i].file, bin);
	assert_string_equal(m->map[i].build_id, id);
	assert_true(m->map[i].start <= fn && fn < m->map[i].limit);
	hs_usyms_free(u);
	fclose(f);
	unlink(src);
	rmdir(dir);
}

/*
 * Processes of the same binaries share them: each binary's symbols are
 * read once, whatever the number of processes (a node's containers run
 * the same images); a new interval (hs_usyms_forget()) keeps the
 * processes captured since the last one, and those binaries.
 */
static void shared_binaries(void **state)
{
	uintptr_t a = (uintptr_t)usyms_probe_fn;
	struct hs_usyms *u = hs_usyms_new();
	const struct hs_maps *m;
	pid_t kid[2];
	size_t n, len;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		kid[i] = fork();
		assert_true(kid[i] >= 0);
		if (!kid[i]) {
			/* Gone with the test, whatever its end; not holding its output. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(60);
			dup2(open("/dev/null", O_WRONLY), 1);
			dup2(1, 2);
			pause();
			_exit(0);
		}
	}
	assert_int_equal(hs_usyms_capture(u, getpid()), 0);
	n = hs_usyms_binaries(u);
	/* This program, libc, the dynamic loader, the vDSO. */
	assert_true(n >= 3);
	assert_string_equal(hs_usyms_lookup(u, getpid(), a + 1, &len), "usyms_probe_fn");
	assert_int_equal(hs_usyms_capture(u, kid[0]), 0);
	assert_int_equal(hs_usyms_capture(u, kid[1]), 0);
	assert_int_equal(hs_usyms_binaries(u), n);
	assert_string_equal(hs_usyms_lookup(u, kid[1], a + 1, &len), "usyms_probe_fn");
	assert_int_equal(len, strlen("usyms_probe_fn"));
	/* Every one captured in the interval: all kept. */
	hs_usyms_forget(u);
	assert_int_equal(hs_usyms_captured(u, kid[1], NULL), 1);
	assert_null(hs_usyms_maps(u));
	/* Only kid[0] captured in the next one: the others forgotten. */
	assert_int_equal(hs_usyms_capture(u, kid[0]), 0);
	hs_usyms_forget(u);
	assert_int_equal(hs_usyms_captured(u, kid[0], NULL), 2);
	assert_int_equal(hs_usyms_captured(u, kid[1], NULL), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 0);
	assert_null(hs_usyms_lookup(u, kid[1], a + 1, &len));
	assert_string_equal(hs_usyms_lookup(u, kid[0], a + 1, &len), "usyms_probe_fn");
	assert_int_equal(hs_usyms_binaries(u), n);
	/* The names of this interval, with their binary. */
	m = hs_usyms_maps(u);
	assert_non_null(m);
	assert_true(hs_maps_find_frame(m, "usyms_probe_fn", 14) >= 0);
	for (i = 0; i < 2; i++) {
		kill(kid[i], SIGKILL);
		waitpid(kid[i], NULL, 0);
	}
	/* Nothing captured in the last one: nothing kept. */
	hs_usyms_forget(u);
	hs_usyms_forget(u);
	assert_int_equal(hs_usyms_binaries(u), 0);
	hs_usyms_free(u);
}

/*
 * Refreshing captures: a new process at once, one unchanged since after
 * a gap that doubles (0.25 s to 8 s), one whose executable mappings
 * changed at once again.
 */
static void refresh(void **state)
{
	struct hs_usyms *u = hs_usyms_new();
	unsigned int builds;
	void *x;
	int fd;

	(void)state;
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 100), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 1);
	/* Not again within 0.25 s, then after 0.25 s, 0.5 s, 1 s... */
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 100.2), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 1);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 100.3), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 2);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 100.7), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 2);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 100.9), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), &builds), 3);
	assert_int_equal(builds, 1);
	/* At most 8 s apart. */
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 200), 0);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 300), 0);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 400), 0);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 500), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 7);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 507.9), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 7);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 508.1), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 8);
	/* Changed (an executable mapping more): read again after 0.25 s. */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(x != MAP_FAILED);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 520), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), &builds), 9);
	assert_int_equal(builds, 2);
	assert_int_equal(hs_usyms_refresh_at(u, getpid(), 520.3), 0);
	assert_int_equal(hs_usyms_captured(u, getpid(), NULL), 10);
	munmap(x, 4096);
	close(fd);
	hs_usyms_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_functions),
		cmocka_unit_test(unnamed_code_and_vdso),
		cmocka_unit_test(perf_map),
		cmocka_unit_test(demangled),
		cmocka_unit_test(exited_process),
		cmocka_unit_test(shared_binaries),
		cmocka_unit_test(refresh),
	};

	return cmocka_run_group_tests_name("usyms", tests, NULL, NULL);
}
