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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "profile.h"
#include "util.h"

#define HS_SVG_WIDTH	1200
#define HS_SVG_FRAME	16	/* height of a frame, px */
#define HS_SVG_TOP	60	/* title and controls */
#define HS_SVG_MIN_PX	0.1	/* frames narrower are not drawn (their parents are) */

struct hs_node {
	char *name;
	uint64_t count;		/* samples (of B in a differential graph) */
	uint64_t count_a;	/* samples of A (differential graph only) */
	struct hs_node *child, *next;
};

/* What every frame of one graph is drawn against. */
struct hs_svg {
	uint64_t total, total_a;
	int diff;		/* a differential graph */
	double max_delta;	/* the largest change of share, for the colour scale */
	int height;
	const struct hs_maps *maps;	/* the user frames the tool named, or NULL */
};

/* Where a frame stands in its line: before its user frames, in them, after them. */
enum hs_part { HS_KEYS, HS_USER, HS_KERNEL };

/* The part of frame @name whose caller (parent) is in part @parent. */
static enum hs_part hs_part_of(const struct hs_svg *g, enum hs_part parent, const char *name)
{
	int user = !strncmp(name, "0x", 2) || hs_maps_find_frame(g->maps, name, strlen(name)) >= 0;

	if (!strcmp(name, "[user]"))
		return HS_KERNEL;	/* a sample in user mode without user frames */
	if (name[0] == '[')
		return parent;		/* keys and markers */
	if (user && parent != HS_KERNEL)
		return HS_USER;
	return parent == HS_KEYS ? HS_KEYS : HS_KERNEL;
}

static struct hs_node *hs_node_child(struct hs_node *parent, const char *name, size_t len)
{
	struct hs_node *n;

	for (n = parent->child; n; n = n->next)
		if (strlen(n->name) == len && !memcmp(n->name, name, len))
			return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = strndup(name, len);
	if (!n->name) {
		free(n);
		return NULL;
	}
	n->next = parent->child;
	parent->child = n;
	return n;
}

static void hs_node_free(struct hs_node *n)
{
	struct hs_node *c, *next;

	for (c = n->child; c; c = next) {
		next = c->next;
		hs_node_free(c);
	}
	free(n->name);
	free(n);
}

static int hs_node_depth(const struct hs_node *n)
{
	const struct hs_node *c;
	int d = 0, cd;

	for (c = n->child; c; c = c->next) {
		if (!c->count)
			continue;	/* only in A: not drawn */
		cd = hs_node_depth(c);
		if (cd > d)
			d = cd;
	}
	return d + 1;
}

static void hs_xml(FILE *f, const char *s)
{
	hs_xml_str(f, s, strlen(s));
}

/*
 * The name as it fits @w px at 7 px a character (as the script's fit()),
 * cut between characters, never inside one.
 */
static void hs_label(FILE *f, const char *name, double w)
{
	size_t len = strlen(name), max = w > 6 ? (size_t)((w - 6) / 7) : 0, cut;

	if (max < 3)
		return;
	cut = hs_utf8_prefix(name, len, max, NULL);
	if (cut == len) {
		hs_xml_str(f, name, len);
		return;
	}
	hs_xml_str(f, name, hs_utf8_prefix(name, len, max - 2, NULL));
	fputs("..", f);
}

/* Colour by kind, varied by a hash of the name so neighbours differ. */
static void hs_color(const char *name, int user, char *buf, size_t len)
{
	unsigned int h = hs_hash(name, strlen(name));

	if (name[0] == '[')
		snprintf(buf, len, "rgb(%u,%u,%u)", 160 + h % 30, 160 + h % 30, 160 + h % 30);
	else if (user)
		snprintf(buf, len, "rgb(%u,%u,%u)", 60 + h % 60, 160 + h % 60, 180 + h % 50);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + h % 35, 80 + h % 120, 40 + h % 40);
}

/* B's share minus A's share of a frame, as a fraction. */
static double hs_delta(const struct hs_svg *g, const struct hs_node *n)
{
	double d = (double)n->count / g->total;

	if (g->total_a)
		d -= (double)n->count_a / g->total_a;
	return d < 1e-12 && d > -1e-12 ? 0 : d;
}

static double hs_max_delta(const struct hs_svg *g, const struct hs_node *n)
{
	double m = hs_delta(g, n), cm;
	const struct hs_node *c;

	m = m < 0 ? -m : m;
	for (c = n->child; c; c = c->next) {
		if (!c->count)
			continue;
		cm = hs_max_delta(g, c);
		if (cm > m)
			m = cm;
	}
	return m;
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

static void hs_svg_node(FILE *f, const struct hs_svg *g, const struct hs_node *n, double x,
			int level, enum hs_part parent)
{
	enum hs_part part = level ? hs_part_of(g, parent, n->name) : HS_KEYS;
	double w = (double)n->count * HS_SVG_WIDTH / g->total, cx = x, delta = 0;
	int y = g->height - (level + 1) * HS_SVG_FRAME;
	const struct hs_node *c;
	char color[32];

	if (w < HS_SVG_MIN_PX)
		return;
	if (g->diff)
		hs_diff_color(delta = hs_delta(g, n), g->max_delta, color, sizeof(color));
	else
		hs_color(n->name, part == HS_USER, color, sizeof(color));
	fprintf(f, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-l=\"%d\"><title>", x, w,
		level);
	hs_xml(f, n->name);
	if (g->diff)
		fprintf(f, " (B: %llu samples, %.2f%%; A: %llu samples, %.2f%%; %+.2f pp)",
			(unsigned long long)n->count, 100.0 * n->count / g->total,
			(unsigned long long)n->count_a,
			g->total_a ? 100.0 * n->count_a / g->total_a : 0.0, 100 * delta);
	else
		fprintf(f, " (%llu samples, %.2f%%)", (unsigned long long)n->count,
			100.0 * n->count / g->total);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">", x, y, w, HS_SVG_FRAME - 1,
		color, x + 3, y + HS_SVG_FRAME - 4);
	hs_label(f, n->name, w);
	fprintf(f, "</text></g>\n");
	for (c = n->child; c; c = c->next) {
		hs_svg_node(f, g, c, cx, level + 1, part);
		cx += (double)c->count * HS_SVG_WIDTH / g->total;
	}
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
	"    var chars = Math.floor((w - 6) / 7);\n"
	"    t.textContent = chars < 3 ? '' : name.length <= chars ? name : "
	"name.substring(0, chars - 2) + '..';\n"
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
	"function search() {\n"
	"  var re = prompt('Search (regular expression)');\n"
	"  if (re === null) return;\n"
	"  var rx = new RegExp(re), hit = 0, total = 0;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], s = f.querySelector('title').textContent, r = f.querySelector"
	"('rect');\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute"
	"('fill'));\n"
	"    var m = re !== '' && rx.test(s.substring(0, s.lastIndexOf(' (')));\n"
	"    r.setAttribute('fill', m ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
	"  }\n"
	"  document.getElementById('matched').textContent = re === '' ? '' : 'searched: ' + re;\n"
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

/* Add @p's stacks to the tree, to each node's count (or count_a, for A). */
static int hs_tree_add(struct hs_node *root, const struct hs_profile *p, int is_a)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		const char *s = p->lines[i].stack, *e;
		struct hs_node *n = root;

		for (;; s = e + 1) {
			*(is_a ? &n->count_a : &n->count) += p->lines[i].count;
			e = strchrnul(s, ';');
			n = hs_node_child(n, s, e - s);
			if (!n)
				return -ENOMEM;
			if (!*e)
				break;
		}
		*(is_a ? &n->count_a : &n->count) += p->lines[i].count;
	}
	return 0;
}

/* The header's facts: what recorded it and what was lost. */
static void hs_svg_facts(FILE *f, const struct hs_profile *p)
{
	if (p->event) {
		hs_xml(f, p->event);
		fprintf(f, ", ");
		hs_xml(f, p->rate);
		fprintf(f, ", %.1f s, ", p->seconds);
	}
	fprintf(f, "%llu samples, %llu dropped, %llu in truncated stacks, %llu collapsed",
		(unsigned long long)p->total, (unsigned long long)p->dropped,
		(unsigned long long)p->truncated, (unsigned long long)p->collapsed);
}

/* The flame graph of @p; with @a, the differential one of @p against @a. */
static int hs_svg_render(FILE *f, const struct hs_profile *p, const struct hs_profile *a)
{
	struct hs_node *root = calloc(1, sizeof(*root));
	struct hs_svg g = { .diff = !!a };
	int depth, height, ret;

	if (!root)
		return -ENOMEM;
	root->name = strdup("all");
	ret = root->name ? hs_tree_add(root, p, 0) : -ENOMEM;
	if (!ret && a)
		ret = hs_tree_add(root, a, 1);
	if (ret) {
		hs_node_free(root);
		return ret;
	}
	depth = hs_node_depth(root);
	height = HS_SVG_TOP + depth * HS_SVG_FRAME + 10;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 11px; pointer-events: none; }\n"
		"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		".c { cursor: pointer; fill: rgb(0,0,160); }</style>\n"
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
		"<text id=\"matched\" x=\"%d\" y=\"55\"></text>\n",
		HS_SVG_WIDTH - 170, HS_SVG_WIDTH - 70, HS_SVG_WIDTH - 170);
	g.total = root->count;
	g.total_a = root->count_a;
	g.height = height - 10;
	g.maps = p->maps;
	if (g.total) {
		g.max_delta = a ? hs_max_delta(&g, root) : 0;
		hs_svg_node(f, &g, root, 0, 0, HS_KEYS);
	}
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar W = %d;\n", HS_SVG_WIDTH);
	fputs(hs_svg_script, f);
	fprintf(f, "</svg>\n");
	hs_node_free(root);
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
