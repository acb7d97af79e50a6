// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the binaries a profile's frames came from, with their
 * build IDs (maps.h). The kernel's and modules' build IDs come from their
 * raw ELF notes in sysfs, read with libelf's note iteration
 * (gelf_getnote) over the notes wrapped as the only content of an ELF
 * image in memory: libelf reads notes only out of an Elf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "maps.h"
#include "profile.h"

/* Notes files are small (the kernel's: a few hundred bytes). */
#define HS_NOTES_MAX	65536

static int hs_build_id_equal(const char *a, const char *b)
{
	return !strcmp(a, b ?: "");
}

long hs_maps_add(struct hs_maps **mp, const char *file, const char *build_id, uint64_t start,
		 uint64_t limit, uint64_t offset)
{
	struct hs_maps *m = *mp;
	struct hs_mapping *map;
	size_t i;

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		hs_strtab_init(&m->frames, 1);
		*mp = m;
	}
	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->map[i].file, file) && hs_build_id_equal(m->map[i].build_id, build_id))
			return i;
	if (hs_grow(&m->map, &m->cap, m->nr, sizeof(*m->map), 8))
		return -ENOMEM;
	map = &m->map[m->nr];
	memset(map, 0, sizeof(*map));
	map->file = strdup(file);
	if (!map->file)
		return -ENOMEM;
	snprintf(map->build_id, sizeof(map->build_id), "%s", build_id ?: "");
	map->start = start;
	map->limit = limit;
	map->offset = offset;
	return m->nr++;
}

int hs_maps_frame(struct hs_maps *m, const char *name, size_t len, size_t map)
{
	size_t nr = m->frames.nr;
	long id = hs_strtab_add(&m->frames, name, len);

	if (id < 0)
		return -ENOMEM;
	if ((size_t)id < nr)
		return 0;	/* the first one named wins */
	if (m->frame_cap <= (size_t)id) {
		size_t cap = m->frame_cap ? m->frame_cap * 2 : 256;
		size_t *fm = realloc(m->frame_map, cap * sizeof(*fm));

		if (!fm)
			return -ENOMEM;
		m->frame_map = fm;
		m->frame_cap = cap;
	}
	m->frame_map[id] = map;
	return 0;
}

long hs_maps_find_frame(const struct hs_maps *m, const char *name, size_t len)
{
	long id = m ? hs_strtab_find(&m->frames, name, len) : -1;

	return id < 0 ? -1 : (long)m->frame_map[id];
}

long hs_maps_find_file(const struct hs_maps *m, const char *file, size_t len)
{
	size_t i;

	for (i = 0; m && i < m->nr; i++)
		if (!strncmp(m->map[i].file, file, len) && !m->map[i].file[len])
			return i;
	return -1;
}

int hs_maps_merge(struct hs_maps **dst, const struct hs_maps *src)
{
	long *idx;
	size_t i;
	int ret = 0;

	if (!src || !src->nr)
		return 0;
	idx = calloc(src->nr, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < src->nr && !ret; i++) {
		const struct hs_mapping *s = &src->map[i];

		idx[i] = hs_maps_add(dst, s->file, s->build_id, s->start, s->limit, s->offset);
		if (idx[i] < 0)
			ret = -ENOMEM;
	}
	for (i = 0; i < src->frames.nr && !ret; i++)
		ret = hs_maps_frame(*dst, src->frames.str[i].s, src->frames.str[i].len,
				    idx[src->frame_map[i]]);
	free(idx);
	return ret;
}

void hs_maps_free(struct hs_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->map[i].file);
	hs_strtab_free(&m->frames);
	free(m->frame_map);
	free(m->map);
	free(m);
}

int hs_build_id_notes(const char *path, char *hex)
{
	GElf_Ehdr *eh;
	unsigned char *img;
	char *notes;
	size_t off = 0, next, name_off, desc_off, i, n;
	Elf_Data *data;
	GElf_Nhdr nh;
	ssize_t len;
	Elf *elf;
	int ret = -ENOENT;

	hex[0] = '\0';
	notes = hs_read_file(path, &n);
	if (!notes)
		return -errno;
	len = n < HS_NOTES_MAX ? n : HS_NOTES_MAX;
	/* The notes after an ELF header of this machine: an image libelf opens. */
	img = calloc(1, sizeof(*eh) + len);
	if (!img) {
		free(notes);
		return -ENOMEM;
	}
	memcpy(img + sizeof(*eh), notes, len);
	free(notes);
	eh = (GElf_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB :
								       ELFDATA2MSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)img, sizeof(*eh) + len);
	data = elf ? elf_getdata_rawchunk(elf, sizeof(*eh), len, ELF_T_NHDR) : NULL;
	while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != sizeof(ELF_NOTE_GNU) ||
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) || !nh.n_descsz ||
		    nh.n_descsz > HS_BUILD_ID_MAX)
			continue;
		for (i = 0; i < nh.n_descsz; i++)
			sprintf(hex + 2 * i, "%02x", desc[i]);
		ret = 0;
		break;
	}
	if (elf)
		elf_end(elf);
	free(img);
	return ret;
}

const char *hs_module_of_frame(const char *name, size_t len, size_t *file_len)
{
	const char *b;

	if (len < 4 || name[len - 1] != ']')
		return NULL;
	for (b = name + len - 2; b > name && *b != '['; b--)
		;
	if (b <= name + 1 || b[-1] != ' ' || b + 2 >= name + len)
		return NULL;
	*file_len = name + len - b;
	return b;
}

int hs_maps_kernel(struct hs_profile *p, const char *sysfs)
{
	char path[512], hex[2 * HS_BUILD_ID_MAX + 1], file[256];
	size_t i, flen;

	snprintf(path, sizeof(path), "%s/kernel/notes", sysfs);
	hs_build_id_notes(path, hex);
	if (hs_maps_add(&p->maps, HS_KERNEL_MAPPING, hex, 0, 0, 0) < 0)
		return -ENOMEM;
	for (i = 0; i < p->nr; i++) {
		const char *s = p->lines[i].stack, *e, *mod;

		for (;; s = e + 1) {
			e = strchrnul(s, ';');
			mod = hs_module_of_frame(s, e - s, &flen);
			if (mod && flen < sizeof(file) && hs_maps_find_file(p->maps, mod, flen) < 0) {
				memcpy(file, mod, flen);
				file[flen] = '\0';
				snprintf(path, sizeof(path), "%s/module/%.*s/notes/.note.gnu.build-id",
					 sysfs, (int)flen - 2, mod + 1);
				hs_build_id_notes(path, hex);
				if (hs_maps_add(&p->maps, file, hex, 0, 0, 0) < 0)
					return -ENOMEM;
			}
			if (!*e)
				break;
		}
	}
	return 0;
}

void *hs_vdso_image(size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	void *copy;
	size_t i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* Its size, from its headers: the sections' come last. */
	*size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > *size)
			*size = ph[i].p_offset + ph[i].p_filesz;
	copy = malloc(*size);
	if (copy)
		memcpy(copy, eh, *size);
	return copy;
}

void hs_maps_print(FILE *f, const struct hs_maps *m)
{
	size_t i;

	for (i = 0; m && i < m->nr; i++)
		fprintf(f, "# mapping: %s, build id %s\n", m->map[i].file,
			m->map[i].build_id[0] ? m->map[i].build_id : "unknown");
}
