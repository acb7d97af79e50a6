/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: a profile in memory (folded stacks) and its writers. */
#ifndef HOTSTACK_PROFILE_H
#define HOTSTACK_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

struct hs_maps;

/* One folded line: "frame;frame;...;frame COUNT", outermost first. */
struct hs_stack_line {
	const char *stack;	/* the frames, ';'-separated, NUL-terminated: in p->text */
	size_t len;
	uint64_t count;
};

struct hs_profile {
	struct hs_stack_line *lines;
	size_t nr, cap;
	uint64_t total;		/* sum of counts, drop lines included */
	uint64_t dropped;	/* samples in "[dropped];..." lines */
	uint64_t truncated;	/* samples of stacks marked [truncated] */
	uint64_t collapsed;	/* samples of stacks marked [collapsed N] */
	uint64_t filtered;	/* samples of other processes or idle (not lost: not asked for) */
	/* What recorded it, when known (record fills these; a pprof file keeps them). */
	const char *event;
	char rate[32];
	double seconds;
	char event_buf[32];	/* the event's name when read from a file */
	/* When it began, nanoseconds since the epoch (pprof's time_nanos); 0: unknown. */
	int64_t time_ns;
	/*
	 * More comments for the pprof writer, each "hotstack NOTE" (the agent's
	 * labels: "label: hostname=web1"), NULL-terminated; NULL: none. The
	 * caller's strings.
	 */
	const char *const *notes;
	/* The text of every line's stack: the profile owns it, all of it here. */
	struct hs_arena text;
	/* The lines' stacks, numbered as lines: the same text twice is one line. */
	struct hs_strtab stacks;
	/* The binaries frames came from, when known (maps.h); NULL: unknown. */
	struct hs_maps *maps;
	/*
	 * HOTSTACK_KEY_* known to lead every line (record's --keys, a pprof
	 * file's, or a folded file's "# hotstack keys:" line); 0: not known,
	 * the lines tell (a process name is a leading frame a "[pid N]" follows).
	 */
	uint32_t keys;
};

/* The keys that lead a line (hs_line_keys()), each NULL / 0 when absent. */
struct hs_line_keys {
	const char *comm;	/* the process name */
	size_t comm_len;
	uint32_t pid;		/* from "[pid N]" */
	const char *cgroup;	/* the PATH (or ID) of "[cgroup PATH]" */
	size_t cgroup_len;
	const char *context;	/* "[task]", "[softirq]", "[hardirq]", "[idle]" */
	size_t context_len;
	const char *frames;	/* what follows them: markers and frames */
};

/*
 * The keys of line @l of @p: a process name is the leading frame when a
 * "[pid N]" or "[cgroup PATH]" key follows it (read()'s and perf's
 * layout) or when p->keys says the lines have one; then "[pid N]", then
 * "[cgroup PATH]", then the context.
 */
void hs_line_keys(const struct hs_profile *p, const struct hs_stack_line *l,
		  struct hs_line_keys *k);

/* The line a folded file starts with when its lines start with a process name alone. */
#define HS_KEYS_COMMENT	"# hotstack keys: "

/* The pseudo-stack of the drops of one reason: "[dropped];[REASON]". */
#define HS_DROPPED_FRAME "[dropped]"

/* Whether @stack is one of those; the reason ("[table full]") follows at HS_DROP_REASON. */
static inline int hs_is_drop_stack(const char *stack)
{
	return !strncmp(stack, HS_DROPPED_FRAME ";", sizeof(HS_DROPPED_FRAME));
}
#define HS_DROP_REASON	sizeof(HS_DROPPED_FRAME)

/*
 * Parse folded text (read() of /dev/hotstack, or a .folded file): lines
 * "STACK COUNT", outermost frame first, COUNT a whole number; empty lines
 * and "#" comments are skipped, a CR before the LF ignored. A line that
 * is not one (no count, a negative or a non-number count, counts adding
 * up past 2^64 - 1) makes the text not a profile. Returns 0, -ENOMEM, or
 * -EBADMSG / -EOVERFLOW with the number of that line in *@bad_line (may be
 * NULL).
 */
int hs_profile_parse(struct hs_profile *p, const char *text, size_t *bad_line);

/*
 * The same on @buf[0..len) (NUL-terminated), in place: the profile takes
 * @buf, whatever the result. On error, "@name:LINE: what is wrong" in @err.
 */
int hs_profile_parse_buf(struct hs_profile *p, char *buf, size_t len, const char *name,
			 char *err, size_t errlen);

/*
 * Add a line: @stack[0..len) is copied into p->text. A stack the profile
 * has already gets the count added to its line: every output shows a
 * stack once (two call sites that print the same text are one line).
 * 0, -ENOMEM, or -EOVERFLOW when the counts would pass 2^64 - 1.
 */
int hs_profile_add(struct hs_profile *p, const char *stack, size_t len, uint64_t count);

/*
 * The same for a caller that knows the stack's markers (the table's
 * flags): HS_MARK_TRUNCATED, HS_MARK_COLLAPSED; they are not looked for.
 */
#define HS_MARK_TRUNCATED	1U
#define HS_MARK_COLLAPSED	2U
int hs_profile_add_marked(struct hs_profile *p, const char *stack, size_t len, uint64_t count,
			  unsigned int markers);

/* Room for @lines more lines, to add them without growing. 0 or -ENOMEM. */
int hs_profile_reserve(struct hs_profile *p, size_t lines);

/* The same for a NUL-terminated @stack that is in p->text already. */
int hs_profile_add_owned(struct hs_profile *p, const char *stack, size_t len, uint64_t count);

void hs_profile_free(struct hs_profile *p);

/* Writers: each returns 0 or -errno. */
int hs_write_folded(FILE *f, const struct hs_profile *p);		/* fmt_folded.c */
int hs_write_report(FILE *f, const struct hs_profile *p, unsigned int top);	/* fmt_report.c */
int hs_write_json(FILE *f, const struct hs_profile *p);		/* fmt_json.c */
int hs_write_svg(FILE *f, const struct hs_profile *p);	/* fmt_svg.c */
int hs_write_pprof(FILE *f, const struct hs_profile *p);	/* fmt_pprof.c, gzipped */
/*
 * gzip @len bytes of @data to @f: from HS_GZIP_STORED bytes on compressed
 * (level 1, as Go's pprof), under it stored. 0, -ENOMEM or -EIO.
 */
int hs_gzip_write(FILE *f, const void *data, size_t len);	/* fmt_pprof.c */
/* Bytes from which hs_gzip_write() compresses; under them it stores. */
#define HS_GZIP_STORED	4096

/*
 * The OTLP profile of @p (fmt_otlp.c): one ExportProfilesServiceRequest,
 * its resource's attributes @resource ("KEY=VALUE" strings, NULL-ended;
 * NULL: service.name=hotstack alone). -EOPNOTSUPP when built without
 * OTLP (hs_otlp_built()).
 */
int hs_write_otlp(FILE *f, const struct hs_profile *p, const char *const *resource);
/*
 * The same for @nr profiles (1 or more, their mappings @ps[0]'s), each
 * with its resource @resources[i] (@resources NULL: the default), in one
 * request: a ResourceProfiles each, one dictionary for them all.
 */
int hs_write_otlp_many(FILE *f, const struct hs_profile *const *ps,
		       const char *const *const *resources, size_t nr);
int hs_otlp_built(void);
/*
 * An OTLP export's answer (ExportProfilesServiceResponse, @len bytes):
 * its partial success's rejected profiles in *@rejected, its message in
 * @msg. 0, -EBADMSG (not one), -EOPNOTSUPP (built without OTLP).
 */
int hs_otlp_answer(const void *buf, size_t len, int64_t *rejected, char *msg, size_t msglen);

/* Shared by the pprof and OTLP writers (fmt_pprof.c). */
/* Mapping numbers: 1 the kernel's, 2 [user] (hex user frames), then the binaries known. */
#define HS_MAP_KERNEL	1
#define HS_MAP_USER	2
/*
 * The mapping number of frame @name: 0 for markers, a known binary's
 * (@map_id: the number of each of @m's), HS_MAP_USER for a hex address
 * (in *@addr), a known module's, else HS_MAP_KERNEL.
 */
uint64_t hs_frame_mapping(const char *name, const struct hs_maps *m, const uint64_t *map_id,
			  uint64_t *addr);
/*
 * The period of @p's samples: cpu-clock and task-clock in nanoseconds
 * (*@clock set), other events at a fixed period in events; 0: unknown.
 */
int64_t hs_pprof_period(const struct hs_profile *p, int *clock);
/* The frames of line @l after its keys (@frames: hs_line_keys()'s). */
size_t hs_frames_of(const struct hs_stack_line *l, const char *frames);

/*
 * Decode a pprof profile (protobuf, already gunzipped) into @p: stacks
 * outermost first, the first "count" value. 0, -EBADMSG (not a profile),
 * -EDOM (sample number *@bad_sample, from 1, has no count or a negative
 * one), -EOVERFLOW (the counts pass 2^64 - 1) or -ENOMEM.
 */
int hs_read_pprof(struct hs_profile *p, const void *data, size_t len, size_t *bad_sample);

/*
 * Load a saved profile from @path ("-": standard input): folded text or
 * pprof, gzipped or not. Returns 0, or -errno with the reason in @err,
 * the file (and the line) named: a file that is neither is refused.
 */
int hs_profile_load(struct hs_profile *p, const char *path, char *err, size_t errlen);

/* Differential views of B against A (diff.c, fmt_svg.c). */
struct hs_view;
/* The diff's report as @v asks (its sort keys, rows, limit, tables); NULL: the default. */
int hs_write_diff_report(FILE *f, const char *name_a, const struct hs_profile *a,
			 const char *name_b, const struct hs_profile *b, const struct hs_view *v);
int hs_write_diff_folded(FILE *f, const struct hs_profile *a, const struct hs_profile *b);
int hs_write_svg_diff(FILE *f, const struct hs_profile *a, const struct hs_profile *b);

/*
 * A function's samples in up to two profiles (diff: A in [0], B in [1]):
 * self (it is the leaf) and total (it is on the stack; once a stack, even
 * in recursion).
 */
struct hs_fn {
	const char *name;	/* in the hs_fns' table */
	uint64_t self[2], total[2];
};

/* The functions of profiles, each once: found through the string table. */
struct hs_fns {
	struct hs_fn *fn;	/* in order of first appearance */
	size_t nr, cap;
	struct hs_strtab names;	/* fn[i]'s name is names.str[i] */
	uint64_t *seen;		/* per function: the last stack it was counted on, + 1 */
};

void hs_fns_init(struct hs_fns *f);

/*
 * Count every function of @p in column @col (0 or 1). Markers ("[...]"
 * frames) are not functions, nor is a process name (the leading frame
 * when a "[pid N]" key follows it). Linear in the profile's size.
 * 0 or -ENOMEM.
 */
int hs_fns_add(struct hs_fns *f, const struct hs_profile *p, int col);

/* The keys a row of the report can be by (perf report's --sort). */
enum hs_sort_key {
	HS_SORT_SYM, HS_SORT_COMM, HS_SORT_PID, HS_SORT_MODULE, HS_SORT_CONTEXT,
	HS_SORT_CGROUP,		/* the cgroup key's path */
	HS_SORT_CONTAINER,	/* the container its path names (cgroup.h) */
	HS_NR_SORT
};

/*
 * The same by the keys @sort[0..nr) (in that order): a row is named by
 * each key's value, two spaces apart ("bash  vfs_read"); "-" for a key a
 * line lacks. With sym or module among them, every frame of a stack
 * counts as hs_fns_add() counts functions; without, a stack is one row
 * (self = total). 0 or -ENOMEM.
 */
int hs_fns_add_keyed(struct hs_fns *f, const struct hs_profile *p, int col, const int *sort,
		     int nr);

void hs_fns_free(struct hs_fns *f);

/* The module of a frame: "MOD" of "func [MOD]", a user binary's name, or "[kernel.kallsyms]". */
const char *hs_frame_module(const struct hs_profile *p, const char *frame, size_t len,
			    size_t *mod_len);

/*
 * Whether @p's counts are nanoseconds, not samples: "off_cpu" (off-CPU
 * time) or "wall" (wall-clock time), pprof's name of the type; else NULL.
 */
const char *hs_profile_ns_type(const struct hs_profile *p);
int hs_profile_ns(const struct hs_profile *p);

#endif
