// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: an interactive SVG flame graph, self-contained (no network):
 * hover for details, click to zoom, Ctrl-F or "Search" to highlight.
 * Kernel frames in warm colours, user frames in blue-green, hotstack's
 * markers ([dropped], [truncated], ...) in grey.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define HS_SVG_WIDTH	1200
#define HS_SVG_FRAME	16	/* height of a frame, px */
#define HS_SVG_TOP	60	/* title and controls */
#define HS_SVG_MIN_PX	0.1	/* frames narrower are not drawn (their parents are) */

struct hs_node {
	char *name;
	uint64_t count;
	struct hs_node *child, *next;
};

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
		cd = hs_node_depth(c);
		if (cd > d)
			d = cd;
	}
	return d + 1;
}

static void hs_xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* The name as it fits @w px at 7 px a character (as the script's fit()). */
static void hs_label(FILE *f, const char *name, double w)
{
	int chars = (int)((w - 6) / 7);
	size_t len = strlen(name);
	char *cut;

	if (chars < 3)
		return;
	if (len <= (size_t)chars) {
		hs_xml(f, name);
		return;
	}
	cut = strndup(name, chars - 2);
	if (cut)
		hs_xml(f, cut);
	free(cut);
	fputs("..", f);
}

/* Colour by kind, varied by a hash of the name so neighbours differ. */
static void hs_color(const char *name, char *buf, size_t len)
{
	unsigned int h = 5381;
	const char *s;

	for (s = name; *s; s++)
		h = h * 33 + (unsigned char)*s;
	if (name[0] == '[')
		snprintf(buf, len, "rgb(%u,%u,%u)", 160 + h % 30, 160 + h % 30, 160 + h % 30);
	else if (!strncmp(name, "0x", 2))
		snprintf(buf, len, "rgb(%u,%u,%u)", 60 + h % 60, 160 + h % 60, 180 + h % 50);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + h % 35, 80 + h % 120, 40 + h % 40);
}

static void hs_svg_node(FILE *f, const struct hs_node *n, uint64_t total, double x,
			int level, int height)
{
	double w = (double)n->count * HS_SVG_WIDTH / total, cx = x;
	int y = height - (level + 1) * HS_SVG_FRAME;
	const struct hs_node *c;
	char color[32];

	if (w < HS_SVG_MIN_PX)
		return;
	hs_color(n->name, color, sizeof(color));
	fprintf(f, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-l=\"%d\"><title>", x, w,
		level);
	hs_xml(f, n->name);
	fprintf(f, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		(unsigned long long)n->count, 100.0 * n->count / total, x, y, w, HS_SVG_FRAME - 1,
		color, x + 3, y + HS_SVG_FRAME - 4);
	hs_label(f, n->name, w);
	fprintf(f, "</text></g>\n");
	for (c = n->child; c; c = c->next) {
		hs_svg_node(f, c, total, cx, level + 1, height);
		cx += (double)c->count * HS_SVG_WIDTH / total;
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

int hs_write_svg(FILE *f, const struct hs_profile *p)
{
	struct hs_node *root = calloc(1, sizeof(*root));
	int depth, height, ret = 0;
	size_t i;

	if (!root)
		return -ENOMEM;
	root->name = strdup("all");
	for (i = 0; i < p->nr && !ret; i++) {
		const char *s = p->lines[i].stack, *e;
		struct hs_node *n = root;

		root->count += p->lines[i].count;
		for (; n; s = e + 1) {
			e = strchrnul(s, ';');
			n = hs_node_child(n, s, e - s);
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			n->count += p->lines[i].count;
			if (!*e)
				break;
		}
	}
	if (ret || !root->name) {
		hs_node_free(root);
		return -ENOMEM;
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
		"hotstack flame graph</text>\n<text x=\"10\" y=\"40\">",
		HS_SVG_WIDTH, height, HS_SVG_WIDTH, height, HS_SVG_WIDTH / 2);
	if (p->event) {
		hs_xml(f, p->event);
		fprintf(f, ", ");
		hs_xml(f, p->rate);
		fprintf(f, ", %.1f s, ", p->seconds);
	}
	fprintf(f, "%llu samples, %llu dropped, %llu in truncated stacks, %llu collapsed"
		"</text>\n<text x=\"%d\" y=\"40\" class=\"c\" onclick=\"reset()\">Reset zoom</text>\n"
		"<text x=\"%d\" y=\"40\" class=\"c\" onclick=\"search()\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"55\"></text>\n",
		(unsigned long long)p->total, (unsigned long long)p->dropped,
		(unsigned long long)p->truncated, (unsigned long long)p->collapsed,
		HS_SVG_WIDTH - 170, HS_SVG_WIDTH - 70, HS_SVG_WIDTH - 170);
	if (root->count)
		hs_svg_node(f, root, root->count, 0, 0, height - 10);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar W = %d;\n", HS_SVG_WIDTH);
	fputs(hs_svg_script, f);
	fprintf(f, "</svg>\n");
	hs_node_free(root);
	return ferror(f) ? -EIO : 0;
}
