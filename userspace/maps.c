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
#include <unistd.h>

#include "maps.h"
#include "profile.h"

/* Notes files are small (the kernel's: a few hundred bytes). */
#define HS_NOTES_MAX	65536

static size_t hs_name_hash(const char *s, size_t len)
{
	size_t h = 5381;

	while (len--)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

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
		*mp = m;
	}
	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->map[i].file, file) && hs_build_id_equal(m->map[i].build_id, build_id))
			return i;
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 8;

		map = realloc(m->map, cap * sizeof(*map));
		if (!map)
			return -ENOMEM;
		m->map = map;
		m->cap = cap;
	}
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

static int hs_frames_grow(struct hs_maps *m)
{
	size_t mask = m->mask ? m->mask * 2 + 1 : 255, i, j;
	struct hs_frame_mapping *f = calloc(mask + 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (i = 0; m->frames && i <= m->mask; i++) {
		if (!m->frames[i].name)
			continue;
		for (j = hs_name_hash(m->frames[i].name, strlen(m->frames[i].name)) & mask;
		     f[j].name; j = (j + 1) & mask)
			;
		f[j] = m->frames[i];
	}
	free(m->frames);
	m->frames = f;
	m->mask = mask;
	return 0;
}

/* The slot of @name[0..len): its own, or the empty one it would take. */
static size_t hs_frame_slot(const struct hs_maps *m, const char *name, size_t len)
{
	size_t j;

	for (j = hs_name_hash(name, len) & m->mask; m->frames[j].name; j = (j + 1) & m->mask)
		if (!strncmp(m->frames[j].name, name, len) && !m->frames[j].name[len])
			break;
	return j;
}

int hs_maps_frame(struct hs_maps *m, const char *name, size_t len, size_t map)
{
	size_t j;

	if ((m->nr_frames + 1) * 2 > m->mask + 1 && hs_frames_grow(m))
		return -ENOMEM;
	j = hs_frame_slot(m, name, len);
	if (m->frames[j].name)
		return 0;
	m->frames[j].name = strndup(name, len);
	if (!m->frames[j].name)
		return -ENOMEM;
	m->frames[j].map = map;
	m->nr_frames++;
	return 0;
}

long hs_maps_find_frame(const struct hs_maps *m, const char *name, size_t len)
{
	size_t j;

	if (!m || !m->nr_frames)
		return -1;
	j = hs_frame_slot(m, name, len);
	return m->frames[j].name ? (long)m->frames[j].map : -1;
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
	for (i = 0; src->frames && i <= src->mask && !ret; i++)
		if (src->frames[i].name)
			ret = hs_maps_frame(*dst, src->frames[i].name, strlen(src->frames[i].name),
					    idx[src->frames[i].map]);
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
	for (i = 0; m->frames && i <= m->mask; i++)
		free(m->frames[i].name);
	free(m->frames);
	free(m->map);
	free(m);
}

/* Read up to HS_NOTES_MAX bytes of @path at @buf; the length, or -errno. */
static ssize_t hs_read_notes(const char *path, unsigned char *buf)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len < HS_NOTES_MAX) {
		n = read(fd, buf + len, HS_NOTES_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	return len;
}

int hs_build_id_notes(const char *path, char *hex)
{
	GElf_Ehdr *eh;
	unsigned char *img;
	size_t off = 0, next, name_off, desc_off, i;
	Elf_Data *data;
	GElf_Nhdr nh;
	ssize_t len;
	Elf *elf;
	int ret = -ENOENT;

	hex[0] = '\0';
	/* The notes after an ELF header of this machine: an image libelf opens. */
	img = calloc(1, sizeof(*eh) + HS_NOTES_MAX);
	if (!img)
		return -ENOMEM;
	len = hs_read_notes(path, img + sizeof(*eh));
	if (len < 0) {
		free(img);
		return len;
	}
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

void hs_maps_print(FILE *f, const struct hs_maps *m)
{
	size_t i;

	for (i = 0; m && i < m->nr; i++)
		fprintf(f, "# mapping: %s, build id %s\n", m->map[i].file,
			m->map[i].build_id[0] ? m->map[i].build_id : "unknown");
}
