/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: user-space symbols (elfutils' libdwfl) of the processes
 * seen while recording, from their /proc/PID/maps captured while they
 * ran, so that a process that exits before the end keeps its symbols;
 * each binary's read once, for every process that maps it.
 */
#ifndef HOTSTACK_USYMS_H
#define HOTSTACK_USYMS_H

#include <stddef.h>
#include <stdint.h>

struct hs_usyms;

struct hs_usyms *hs_usyms_new(void);
void hs_usyms_free(struct hs_usyms *u);

/*
 * A new interval (the agent's): forget the processes not captured since
 * the last call, the binaries no other maps, and every name looked up
 * (the next profile's binaries are its own). What stays: the others'
 * mappings, and the symbols of their binaries, read once.
 */
void hs_usyms_forget(struct hs_usyms *u);

/* Binaries whose symbols are held: each once, however many processes map it. */
size_t hs_usyms_binaries(const struct hs_usyms *u);

/*
 * Capture process @pid's mappings now (again: only when they changed),
 * opening its ELF files so that they stay readable after it exits.
 * Returns 0 or -errno (ENOENT: the process is gone; the last capture stays).
 */
int hs_usyms_capture(struct hs_usyms *u, uint32_t pid);

/*
 * hs_usyms_capture() again, or not yet: a process whose executable
 * mappings were the same at its last captures is read again after a gap
 * that doubles each time (a quarter second to 8 s: 500 processes cost a
 * few ms a second, not 30), a new or changed one at each call. Returns
 * the same, 0 when it skipped it.
 */
int hs_usyms_refresh(struct hs_usyms *u, uint32_t pid);
/* The same at @now (hs_now()'s seconds), for the tests. */
int hs_usyms_refresh_at(struct hs_usyms *u, uint32_t pid, double now);

/* The same from @maps (taken, freed), its /proc/PID/maps text read before. */
int hs_usyms_capture_text(struct hs_usyms *u, uint32_t pid, char *maps);

/*
 * Captures of @pid so far that succeeded (0: none); in *@builds (if not
 * NULL) how many of them built its symbols anew: its executable mappings
 * had changed (the others keep what they were).
 */
unsigned int hs_usyms_captured(const struct hs_usyms *u, uint32_t pid, unsigned int *builds);

/*
 * The function containing @addr in @pid (for a return address pass
 * addr - 1), demangled, its length in *len; NULL when unknown. Valid
 * until hs_usyms_free().
 */
const char *hs_usyms_lookup(struct hs_usyms *u, uint32_t pid, uint64_t addr, size_t *len);

/*
 * @name demangled (C++ and Rust, by libiberty's cplus_demangle(), with
 * parameters), malloc'd; NULL when it is not a mangled name.
 */
char *hs_demangle(const char *name);

struct hs_maps;
/*
 * The binaries of the names looked up so far (path, build ID, where
 * mapped), each name with the first binary it was found in; NULL: none.
 * Valid until hs_usyms_free().
 */
const struct hs_maps *hs_usyms_maps(const struct hs_usyms *u);

#endif
