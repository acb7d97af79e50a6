// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: an interactive SVG flame graph, self-contained (no network):
 * hover for details, click to zoom, Ctrl-F or "Search" to highlight.
 * Kernel frames in warm colours, user frames in blue-green, hotstack's
 * markers ([dropped], [truncated], ...) in grey. A line holds its user
 * frames together, after its keys and before its kernel frames (or the
 * [user] marker): they run from the first frame that is a user frame (a
 * hex address, or a name the tool found in a user binary: p->maps) as
 * long as frames are user frames. The same renderer draws
 * the differential flame graph of hotstack diff: the shape of profile B,
 * coloured by how each frame's share of the samples changed from A (red
 * grew, blue shrank, white the same), as flamegraph.pl draws difffolded.
 *
 * The layout depends on the profile, not on the order of its lines: the
 * lines are sorted frame by frame (a stack's frames before its callees',
 * siblings by name, as flamegraph.pl sorts), then walked once, with only
 * the current path in memory: a frame is drawn when its last line has
 * been seen, so time and memory stay linear in the profile's size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "profile.h"
#include "table.h"
#include "util.h"

#define HS_SVG_WIDTH	1200
#define HS_SVG_FRAME	16	/* height of a frame, px */
#define HS_SVG_TOP	60	/* title and controls */
#define HS_SVG_MIN_PX	0.1	/* frames narrower are not drawn (their parents are) */

/* A stack of the graph with its samples in B (the profile drawn) and A. */
struct hs_svg_line {
	const char *s;
	size_t len;
	uint64_t b, a;
};

/* Where a frame stands in its line: before its user frames, in them, after them. */
enum hs_part { HS_KEYS, HS_USER, HS_KERNEL };

/* A frame of the current path, from the root ("all", level 0) down. */
struct hs_svg_level {
	const char *name;
	size_t len;
	uint64_t b, a;		/* its samples so far */
	uint64_t x;		/* B's samples left of it */
	enum hs_part part;
	int off;		/* off-CPU: at or under a wait's reason frame */
};

/* What every frame of one graph is drawn against. */
struct hs_svg {
	FILE *f;		/* NULL: a walk that only measures the change of share */
	uint64_t total, total_a;
	int diff;		/* a differential graph */
	int ns;			/* counts are nanoseconds (off-CPU time) */
	double max_delta;	/* the largest change of share, for the colour scale */
	int height;
	const struct hs_maps *maps;	/* the user frames the tool named, or NULL */
	struct hs_svg_level *path;
	size_t depth;		/* levels of the path in use, the root's included */
};

/* The part of frame @name whose caller (parent) is in part @parent. */
static enum hs_part hs_part_of(const struct hs_svg *g, enum hs_part parent, const char *name,
			       size_t len)
{
	int user = (len > 2 && !memcmp(name, "0x", 2)) ||
		   hs_maps_find_frame(g->maps, name, len) >= 0;

	if (len == 6 && !memcmp(name, "[user]", 6))
		return HS_KERNEL;	/* a sample in user mode without user frames */
	if (len && name[0] == '[')
		return parent;		/* keys and markers */
	if (user && parent != HS_KERNEL)
		return HS_USER;
	return parent == HS_KEYS ? HS_KEYS : HS_KERNEL;
}

/*
 * The name as it fits @w px at 7 px a character (as the script's fit()),
 * cut between characters, never inside one.
 */
static void hs_label(FILE *f, const char *name, size_t len, double w)
{
	size_t max = w > 6 ? (size_t)((w - 6) / 7) : 0;

	if (max < 3)
		return;
	if (hs_utf8_prefix(name, len, max, NULL) == len) {
		hs_xml_str(f, name, len);
		return;
	}
	hs_xml_str(f, name, hs_utf8_prefix(name, len, max - 2, NULL));
	fputs("..", f);
}

/* The leading frame of an off-CPU wait: its reason. */
static int hs_is_wait(const char *name, size_t len)
{
	int c;

	for (c = HOTSTACK_CTX_SLEEP; c <= HOTSTACK_CTX_RUNQUEUE; c++)
		if (strlen(hs_context_names[c]) == len && !memcmp(hs_context_names[c], name, len))
			return 1;
	return 0;
}

/*
 * Colour by kind, varied by a hash of the name so neighbours differ; the
 * kernel frames of an off-CPU wait in flamegraph.pl's "io" blues.
 */
static void hs_color(const char *name, size_t len, int user, int off, char *buf, size_t size)
{
	unsigned int h = hs_hash(name, len);

	if (off && !user)
		snprintf(buf, size, "rgb(%u,%u,%u)", 80 + h % 60, 80 + h % 60, 190 + h % 55);
	else if (len && name[0] == '[')
		snprintf(buf, size, "rgb(%u,%u,%u)", 160 + h % 30, 160 + h % 30, 160 + h % 30);
	else if (user)
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + h % 60, 160 + h % 60, 180 + h % 50);
	else
		snprintf(buf, size, "rgb(%u,%u,%u)", 220 + h % 35, 80 + h % 120, 40 + h % 40);
}

/* B's share minus A's share of a frame, as a fraction. */
static double hs_delta(const struct hs_svg *g, const struct hs_svg_level *n)
{
	double d = (double)n->b / g->total;

	if (g->total_a)
		d -= (double)n->a / g->total_a;
	return d < 1e-12 && d > -1e-12 ? 0 : d;
}

/* flamegraph.pl's scale: red for growth, blue for shrinking, white for none. */
static void hs_diff_color(double delta, double max, char *buf, size_t len)
{
	unsigned int r = 255, gr = 255, b = 255;

	if (delta > 0)
		gr = b = (unsigned int)(210 * (max - delta) / max);
	else if (delta < 0)
		r = gr = (unsigned int)(210 * (max + delta) / max);
	snprintf(buf, len, "rgb(%u,%u,%u)", r, gr, b);
}

/* Level @level of the path is complete: draw it (or note its change of share). */
static void hs_svg_frame(struct hs_svg *g, size_t level)
{
	const struct hs_svg_level *n = &g->path[level];
	double w = (double)n->b * HS_SVG_WIDTH / g->total, delta = 0, m;
	double x = (double)n->x * HS_SVG_WIDTH / g->total;
	int y = g->height - (level + 1) * HS_SVG_FRAME;
	FILE *f = g->f;
	char color[32];

	/* Not drawn: too narrow (its samples are in its parent), or only in A. */
	if (w < HS_SVG_MIN_PX || !n->b)
		return;
	if (g->diff)
		delta = hs_delta(g, n);
	if (!f) {
		m = delta < 0 ? -delta : delta;
		if (m > g->max_delta)
			g->max_delta = m;
		return;
	}
	if (g->diff)
		hs_diff_color(delta, g->max_delta, color, sizeof(color));
	else
		hs_color(n->name, n->len, n->part == HS_USER, n->off, color, sizeof(color));
	fprintf(f, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-l=\"%zu\"><title>", x, w,
		level);
	hs_xml_str(f, n->name, n->len);
	if (g->diff)
		fprintf(f, " (B: %llu samples, %.2f%%; A: %llu samples, %.2f%%; %+.2f pp)",
			(unsigned long long)n->b, 100.0 * n->b / g->total,
			(unsigned long long)n->a,
			g->total_a ? 100.0 * n->a / g->total_a : 0.0, 100 * delta);
	else if (g->ns)
		fprintf(f, " (%.3f ms, %.2f%%)", n->b / 1e6, 100.0 * n->b / g->total);
	else
		fprintf(f, " (%llu samples, %.2f%%)", (unsigned long long)n->b,
			100.0 * n->b / g->total);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">", x, y, w, HS_SVG_FRAME - 1,
		color, x + 3, y + HS_SVG_FRAME - 4);
	hs_label(f, n->name, n->len, w);
	fprintf(f, "</text></g>\n");
}

/*
 * Frame-by-frame order: ';' sorts before every other byte and the end of
 * a stack before ';', so a stack comes before its callees' stacks and the
 * stacks under one frame are next to each other.
 */
static int hs_svg_line_cmp(const void *x, const void *y)
{
	const struct hs_svg_line *p = x, *q = y;
	size_t n = p->len < q->len ? p->len : q->len, i = 0;
	uint64_t u, v;
	int a, b;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		memcpy(&u, p->s + i, 8);
		memcpy(&v, q->s + i, 8);
		if (u != v) {
			i += __builtin_ctzll(u ^ v) / 8;
			break;
		}
	}
#else
	(void)u;
	(void)v;
#endif
	while (i < n && p->s[i] == q->s[i])
		i++;
	if (i == n)
		return p->len < q->len ? -1 : p->len > q->len;
	a = p->s[i] == ';' ? 0 : (unsigned char)p->s[i];
	b = q->s[i] == ';' ? 0 : (unsigned char)q->s[i];
	return a - b;
}

/* Walk the sorted lines: each frame is drawn once its last line is past. */
static void hs_svg_walk(struct hs_svg *g, const struct hs_svg_line *l, size_t nr)
{
	struct hs_svg_level *n;
	uint64_t x = 0;
	size_t i, level;

	g->depth = 1;
	g->path[0].b = g->path[0].a = 0;
	for (i = 0; i < nr; i++) {
		const char *s = l[i].s, *end = s + l[i].len, *e;

		/* The frames the line shares with the path stay open ... */
		for (level = 1; s && level < g->depth; level++) {
			e = memchr(s, ';', end - s) ?: end;
			n = &g->path[level];
			if (n->len != (size_t)(e - s) || memcmp(n->name, s, e - s))
				break;
			s = e == end ? NULL : e + 1;
		}
		/* ... the others are complete ... */
		while (g->depth > level)
			hs_svg_frame(g, --g->depth);
		/* ... and the line's other frames open. */
		for (; s; level++) {
			e = memchr(s, ';', end - s) ?: end;
			n = &g->path[level];
			n->name = s;
			n->len = e - s;
			n->b = n->a = 0;
			n->x = x;
			n->part = hs_part_of(g, level > 1 ? g->path[level - 1].part : HS_KEYS, s,
					     e - s);
			n->off = (level > 1 && g->path[level - 1].off) || hs_is_wait(s, e - s);
			g->depth = level + 1;
			s = e == end ? NULL : e + 1;
		}
		for (level = 0; level < g->depth; level++) {
			g->path[level].b += l[i].b;
			g->path[level].a += l[i].a;
		}
		x += l[i].b;
	}
	while (g->depth > 0)
		hs_svg_frame(g, --g->depth);
}

/* Zoom, search and label fitting; the page needs nothing else. */
static const char hs_svg_script[] =
	"var frames = document.getElementsByClassName('f');\n"
	"function fit() {\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var g = frames[i], r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    var w = parseFloat(r.getAttribute('width')), s = g.querySelector('title')"
	".textContent;\n"
	"    var name = s.substring(0, s.lastIndexOf(' ('));\n"
	"    var chars = Math.floor((w - 6) / 7), cs = Array.from(name);\n"
	"    t.textContent = chars < 3 ? '' : cs.length <= chars ? name : "
	"cs.slice(0, chars - 2).join('') + '..';\n"
	"  }\n"
	"}\n"
	"function zoom(g) {\n"
	"  var zx = parseFloat(g.getAttribute('data-x')), zw = parseFloat(g.getAttribute"
	"('data-w'));\n"
	"  var zl = parseInt(g.getAttribute('data-l'));\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], x = parseFloat(f.getAttribute('data-x'));\n"
	"    var w = parseFloat(f.getAttribute('data-w')), l = parseInt(f.getAttribute"
	"('data-l'));\n"
	"    var inside = x >= zx - 0.0001 && x + w <= zx + zw + 0.0001;\n"
	"    var r = f.querySelector('rect'), t = f.querySelector('text');\n"
	"    if ((inside && l >= zl) || (l < zl && x <= zx + 0.0001 && x + w >= zx + zw - 0.0001)) {\n"
	"      var nx = l < zl ? 0 : (x - zx) * W / zw, nw = l < zl ? W : w * W / zw;\n"
	"      r.setAttribute('x', nx); r.setAttribute('width', nw);\n"
	"      t.setAttribute('x', nx + 3); f.style.display = '';\n"
	"    } else { f.style.display = 'none'; }\n"
	"  }\n"
	"  fit();\n"
	"}\n"
	"function reset() {\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], x = parseFloat(f.getAttribute('data-x'));\n"
	"    var w = parseFloat(f.getAttribute('data-w'));\n"
	"    var r = f.querySelector('rect'), t = f.querySelector('text');\n"
	"    r.setAttribute('x', x); r.setAttribute('width', w); t.setAttribute('x', x + 3);\n"
	"    f.style.display = '';\n"
	"  }\n"
	"  fit();\n"
	"}\n"
	/*
	 * Search: the frames whose name matches highlighted, and their share of
	 * the samples as flamegraph.pl shows it ("Matched: 12.5%"): the widths
	 * of the outermost matched frames (a matched frame's matched callees
	 * are in it already), from the layout before any zoom. A bad regular
	 * expression is said on the page, not thrown. @re: the expression, or
	 * undefined to ask for it (the Search button, Ctrl-F).
	 */
	"function search(re) {\n"
	"  if (re === undefined) re = prompt('Search (regular expression)');\n"
	"  if (re === null) return;\n"
	"  var rx = null, bad = false, spans = [], i;\n"
	"  try { if (re !== '') rx = new RegExp(re); } catch (err) { bad = true; }\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], s = f.querySelector('title').textContent, r = f.querySelector"
	"('rect');\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute"
	"('fill'));\n"
	"    var m = rx !== null && rx.test(s.substring(0, s.lastIndexOf(' (')));\n"
	"    r.setAttribute('fill', m ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
	"    if (m) spans.push([parseFloat(f.getAttribute('data-x')), "
	"parseFloat(f.getAttribute('data-w'))]);\n"
	"  }\n"
	"  spans.sort(function(a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var covered = 0, end = -1;\n"
	"  for (i = 0; i < spans.length; i++)\n"
	"    if (spans[i][0] >= end - 0.0001) { covered += spans[i][1]; "
	"end = spans[i][0] + spans[i][1]; }\n"
	"  var pct = 100 * covered / W;\n"
	"  document.getElementById('matched').textContent = bad ? "
	"'Bad regular expression: ' + re :\n"
	"    rx === null ? '' : 'Matched: ' + (pct === 100 ? pct : pct.toFixed(1)) + '%';\n"
	"}\n"
"document.addEventListener('click', function(e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  if (g) zoom(g);\n"
	"});\n"
	"document.addEventListener('keydown', function(e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(); }\n"
	"});\n"
	"fit();\n"
	"]]></script>\n";

/* The header's facts: what recorded it and what was lost. */
static void hs_svg_facts(FILE *f, const struct hs_profile *p)
{
	if (p->event) {
		hs_xml_str(f, p->event, strlen(p->event));
		fprintf(f, ", ");
		hs_xml_str(f, p->rate, strlen(p->rate));
		fprintf(f, ", %.1f s, ", p->seconds);
	}
	fprintf(f, "%llu samples, %llu dropped, %llu in truncated stacks, %llu collapsed",
		(unsigned long long)p->total, (unsigned long long)p->dropped,
		(unsigned long long)p->truncated, (unsigned long long)p->collapsed);
}

/* The lines of @p (B), with A's counts of the same stacks, and A's other stacks. */
static struct hs_svg_line *hs_svg_lines(const struct hs_profile *p, const struct hs_profile *a,
					size_t *nr, size_t *depth_b, size_t *depth)
{
	size_t n = p->nr + (a ? a->nr : 0), i, k, d;
	struct hs_svg_line *l = malloc((n ? n : 1) * sizeof(*l));
	long id;

	*depth_b = *depth = 0;
	if (!l)
		return NULL;
	for (i = 0; i < p->nr; i++)
		l[i] = (struct hs_svg_line){ p->lines[i].stack, p->lines[i].len, p->lines[i].count, 0 };
	for (k = 0; a && k < a->nr; k++) {
		id = hs_strtab_find(&p->stacks, a->lines[k].stack, a->lines[k].len);
		if (id >= 0)
			l[id].a = a->lines[k].count;
		else
			l[i++] = (struct hs_svg_line){ a->lines[k].stack, a->lines[k].len, 0,
						       a->lines[k].count };
	}
	/* Frames of the deepest stack of B (drawn), and of either (walked). */
	for (n = i, i = 0; i < n; i++) {
		for (k = 0, d = 1; k < l[i].len; k++)
			d += l[i].s[k] == ';';
		if (l[i].b && d > *depth_b)
			*depth_b = d;
		if (d > *depth)
			*depth = d;
	}
	qsort(l, n, sizeof(*l), hs_svg_line_cmp);
	*nr = n;
	return l;
}

/* The flame graph of @p; with @a, the differential one of @p against @a. */
static int hs_svg_render(FILE *f, const struct hs_profile *p, const struct hs_profile *a)
{
	struct hs_svg g = { .diff = !!a, .maps = p->maps, .total = p->total,
			    .total_a = a ? a->total : 0,
			    .ns = hs_profile_ns(p) };
	struct hs_svg_line *l;
	size_t nr, depth_b, depth;
	int height;

	l = hs_svg_lines(p, a, &nr, &depth_b, &depth);
	g.path = calloc(depth + 2, sizeof(*g.path));
	if (!l || !g.path) {
		free(l);
		free(g.path);
		return -ENOMEM;
	}
	g.path[0].name = "all";
	g.path[0].len = 3;
	height = HS_SVG_TOP + (depth_b + 1) * HS_SVG_FRAME + 10;
	/*
	 * A frame's label lets clicks through to its rect; the buttons (class
	 * c: Reset zoom, Search) are text and take them.
	 */
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 11px; pointer-events: none; }\n"
		"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		".c { cursor: pointer; fill: rgb(0,0,160); pointer-events: auto; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,240)\"/>\n"
		"<text x=\"%d\" y=\"20\" style=\"font-size: 15px\" text-anchor=\"middle\">"
		"hotstack %s</text>\n<text x=\"10\" y=\"40\">",
		HS_SVG_WIDTH, height, HS_SVG_WIDTH, height, HS_SVG_WIDTH / 2,
		a ? "differential flame graph: shape of B; red: share grew from A, "
		    "blue: shrank" : "flame graph");
	if (a)
		fprintf(f, "B: ");
	hs_svg_facts(f, p);
	if (a) {
		fprintf(f, "</text>\n<text x=\"10\" y=\"55\">A: ");
		hs_svg_facts(f, a);
	}
	fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" class=\"c\" onclick=\"reset()\">Reset zoom"
		"</text>\n<text x=\"%d\" y=\"40\" class=\"c\" onclick=\"search()\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"55\" text-anchor=\"end\"></text>\n",
		HS_SVG_WIDTH - 170, HS_SVG_WIDTH - 70, HS_SVG_WIDTH - 10);
	g.height = height - 10;
	if (g.total) {
		if (a)
			hs_svg_walk(&g, l, nr);		/* the colour scale first */
		g.f = f;
		hs_svg_walk(&g, l, nr);
	}
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar W = %d;\n", HS_SVG_WIDTH);
	fputs(hs_svg_script, f);
	fprintf(f, "</svg>\n");
	free(l);
	free(g.path);
	return ferror(f) ? -EIO : 0;
}

int hs_write_svg(FILE *f, const struct hs_profile *p)
{
	return hs_svg_render(f, p, NULL);
}

int hs_write_svg_diff(FILE *f, const struct hs_profile *a, const struct hs_profile *b)
{
	return hs_svg_render(f, b, a);
}
