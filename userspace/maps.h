/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: the binaries a profile's frames came from (pprof's
 * Mappings), when known: the running kernel and its modules with their
 * build IDs, read while recording, and the user binaries elfutils named
 * user frames from. Optional and additive: a profile without it (folded
 * text) is written as before, and only the pprof and SVG writers use it.
 */
#ifndef HOTSTACK_MAPS_H
#define HOTSTACK_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* The kernel's mapping, named as perf names it. */
#define HS_KERNEL_MAPPING	"[kernel.kallsyms]"
/* The longest build ID kept, in bytes (a SHA-1 one has 20). */
#define HS_BUILD_ID_MAX		64

struct hs_mapping {
	char *file;		/* HS_KERNEL_MAPPING, a module "[NAME]", or a binary's path */
	char build_id[2 * HS_BUILD_ID_MAX + 1];	/* lower-case hex; "" when unknown */
	uint64_t start, limit, offset;	/* where it was mapped; 0 when unknown */
};

struct hs_maps {
	struct hs_mapping *map;
	size_t nr, cap;
	struct hs_strtab frames;	/* the user frames' names (copied) */
	size_t *frame_map;		/* the mapping of each of them */
	size_t frame_cap;
};

/*
 * The mapping of @file with @build_id (NULL: unknown) in *@m, created
 * (with *@m itself when NULL) unless one of that file and build ID is
 * there. Returns its index, or -ENOMEM.
 */
long hs_maps_add(struct hs_maps **m, const char *file, const char *build_id, uint64_t start,
		 uint64_t limit, uint64_t offset);

/* User frame @name[0..len) came from mapping @map; the first one named wins. 0 or -ENOMEM. */
int hs_maps_frame(struct hs_maps *m, const char *name, size_t len, size_t map);

/* The mapping of user frame @name[0..len), or -1 (not a user frame the tool named). */
long hs_maps_find_frame(const struct hs_maps *m, const char *name, size_t len);

/* The mapping named @file[0..len), or -1. */
long hs_maps_find_file(const struct hs_maps *m, const char *file, size_t len);

/* Add every mapping and user frame of @src to *@dst. 0 or -ENOMEM. */
int hs_maps_merge(struct hs_maps **dst, const struct hs_maps *src);

void hs_maps_free(struct hs_maps *m);

/*
 * The GNU build ID in a file of raw ELF notes (/sys/kernel/notes, a
 * module's notes/.note.gnu.build-id), as hex into @hex (at least
 * 2 * HS_BUILD_ID_MAX + 1 bytes). Returns 0, -ENOENT (no build ID note)
 * or -errno of reading it.
 */
int hs_build_id_notes(const char *path, char *hex);

struct hs_profile;
/*
 * The running kernel's mapping, and one for each module its frames name
 * ("func [MOD]"), with their build IDs from @sysfs ("/sys": kernel/notes,
 * module/MOD/notes/.note.gnu.build-id) where readable. 0 or -ENOMEM.
 */
int hs_maps_kernel(struct hs_profile *p, const char *sysfs);

/* The mapping file a module frame "func [MOD]" names ("[MOD]"), its length in *len; or NULL. */
const char *hs_module_of_frame(const char *name, size_t len, size_t *file_len);

/*
 * A copy of this process's vDSO image (the kernel's, the same in every
 * 64-bit process of it), its length in *@size; malloc'd. NULL: none, or
 * no memory.
 */
void *hs_vdso_image(size_t *size);

/* "# mapping: FILE, build id HEX" lines, for the report. */
void hs_maps_print(FILE *f, const struct hs_maps *m);

#endif
