// SPDX-License-Identifier: MIT
/*
 * uks damon report heats --heatmap FILE.png|FILE.svg: pictures of the heat
 * pixels, laid out as damo's gnuplot plots them: time on the x axis (left
 * to right), address on the y axis (low addresses at the bottom), axis
 * titles and tick labels (relative seconds and sizes, or absolute ones
 * with --abs_time / --abs_addr), and a colour scale of nr_accesses on the
 * right.  Colours run from black through purple, red and orange to pale
 * yellow over the map's lowest..highest heat.
 *
 * PNG through libpng (8-bit RGB) with a small built-in 5x7 bitmap font;
 * SVG written by hand, runs of equal colour along a time column merged
 * into one rectangle so a 500x500 map stays small.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <config.h>
#if UKS_HAVE_LIBPNG
#include <png.h>
#endif

#include "damon.h"

#define IMG_W	900
#define IMG_H	580
#define PL	130	/* plot area: left, top, width, height */
#define PT	50
#define PW	620
#define PH	440
#define NTICKS	5

struct rgb {
	unsigned char r, g, b;
};

static const struct rgb stops[] = {
	{ 0, 0, 4 }, { 87, 16, 110 }, { 188, 55, 84 }, { 249, 142, 9 }, { 252, 255, 164 },
};

static struct rgb colour(double v)
{
	double x;
	int i;
	struct rgb c;

	if (!(v > 0))
		v = 0;
	if (v > 1)
		v = 1;
	x = v * 4;
	i = (int)x;
	if (i >= 4)
		return stops[4];
	x -= i;
	c.r = (unsigned char)(stops[i].r + (stops[i + 1].r - stops[i].r) * x + 0.5);
	c.g = (unsigned char)(stops[i].g + (stops[i + 1].g - stops[i].g) * x + 0.5);
	c.b = (unsigned char)(stops[i].b + (stops[i + 1].b - stops[i].b) * x + 0.5);
	return c;
}

struct frame {
	double lo, hi;
	char xt[NTICKS][48], yt[NTICKS][48], st[3][48];
	char title[96];
};

/* "64.000 MiB" -> "64 MiB", "1.500 GiB" -> "1.5 GiB": an axis needs no more */
static void trim_zeros(char *label)
{
	char *dot = strchr(label, '.'), *unit, *end;

	if (!dot)
		return;
	unit = end = dot + strcspn(dot, " ");	/* " MiB", or the end */
	while (end > dot + 1 && end[-1] == '0')
		end--;
	if (end == dot + 1)
		end = dot;
	memmove(end, unit, strlen(unit) + 1);
}

static void frame_of(const struct uks_damon_heatmap *hm, bool abs_time, bool abs_addr,
		     struct frame *f)
{
	size_t n = (size_t)hm->tres * hm->ares;

	f->lo = f->hi = n ? hm->heat[0] : 0;
	for (size_t i = 1; i < n; i++) {
		if (hm->heat[i] < f->lo)
			f->lo = hm->heat[i];
		if (hm->heat[i] > f->hi)
			f->hi = hm->heat[i];
	}
	for (int k = 0; k < NTICKS; k++) {
		double t = (double)(hm->tmax - hm->tmin) * k / (NTICKS - 1);
		double a = (double)(hm->amax - hm->amin) * k / (NTICKS - 1);

		if (abs_time)
			snprintf(f->xt[k], sizeof(f->xt[k]), "%.3f", ((double)hm->tmin + t) / 1e9);
		else
			snprintf(f->xt[k], sizeof(f->xt[k]), "%.2f", t / 1e9);
		if (abs_addr) {
			snprintf(f->yt[k], sizeof(f->yt[k]), "0x%llx",
				 (unsigned long long)(hm->amin + (uint64_t)a));
		} else {
			damon_fmt_sz(f->yt[k], sizeof(f->yt[k]), a, false);
			trim_zeros(f->yt[k]);
		}
	}
	for (int k = 0; k < 3; k++)
		snprintf(f->st[k], sizeof(f->st[k]), "%.2f", f->lo + (f->hi - f->lo) * k / 2);
	snprintf(f->title, sizeof(f->title), "DAMON heats: target %llu",
		 (unsigned long long)hm->target_id);
}

/* the heat at plot pixel (px, py), 0..1 of the scale */
static double heat_at(const struct uks_damon_heatmap *hm, const struct frame *f, int px, int py)
{
	size_t i = (size_t)px * hm->tres / PW, j = (size_t)(PH - 1 - py) * hm->ares / PH;
	double h = hm->heat[i * hm->ares + j];

	return f->hi > f->lo ? (h - f->lo) / (f->hi - f->lo) : 0;
}

/* ---------------------------------------------------------------- SVG */

static void svg_text(FILE *o, int x, int y, const char *anchor, int size, const char *s,
		     const char *extra)
{
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-family=\"monospace\" font-size=\"%d\" "
		"text-anchor=\"%s\"%s>", x, y, size, anchor, extra ? extra : "");
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", o);
		else if (*s == '>')
			fputs("&gt;", o);
		else if (*s == '&')
			fputs("&amp;", o);
		else
			fputc(*s, o);
	}
	fputs("</text>\n", o);
}

static int write_svg(const struct uks_damon_heatmap *hm, const struct frame *f, FILE *o)
{
	double cw = (double)PW / hm->tres, ch = (double)PH / hm->ares;

	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
		IMG_W, IMG_H, IMG_W, IMG_H, IMG_W, IMG_H);
	fprintf(o, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n");
	for (int k = 0; k <= 8; k++) {
		struct rgb c = colour(k / 8.0);

		fprintf(o, "<stop offset=\"%.3f\" stop-color=\"#%02x%02x%02x\"/>\n", k / 8.0, c.r,
			c.g, c.b);
	}
	fprintf(o, "</linearGradient></defs>\n<g shape-rendering=\"crispEdges\">\n");
	for (unsigned int i = 0; i < hm->tres; i++) {
		unsigned int j = 0;

		while (j < hm->ares) {
			double h = hm->heat[(size_t)i * hm->ares + j];
			double v = f->hi > f->lo ? (h - f->lo) / (f->hi - f->lo) : 0;
			struct rgb c = colour(v), d;
			unsigned int k = j + 1;

			for (; k < hm->ares; k++) {
				double h2 = hm->heat[(size_t)i * hm->ares + k];

				d = colour(f->hi > f->lo ? (h2 - f->lo) / (f->hi - f->lo) : 0);
				if (memcmp(&c, &d, sizeof(c)))
					break;
			}
			/* address j..k-1, bottom up */
			fprintf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"#%02x%02x%02x\"/>\n", PL + i * cw, PT + PH - k * ch,
				cw + 0.05, (k - j) * ch + 0.05, c.r, c.g, c.b);
			j = k;
		}
	}
	fprintf(o, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"black\"/>\n", PL, PT, PW, PH);
	for (int k = 0; k < NTICKS; k++) {
		int x = PL + PW * k / (NTICKS - 1), y = PT + PH - PH * k / (NTICKS - 1);

		fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x,
			PT + PH, x, PT + PH + 6);
		svg_text(o, x, PT + PH + 22, "middle", 13, f->xt[k], NULL);
		fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
			PL - 6, y, PL, y);
		svg_text(o, PL - 10, y + 4, "end", 13, f->yt[k], NULL);
	}
	svg_text(o, PL + PW / 2, PT + PH + 48, "middle", 15, "time (s)", NULL);
	{
		char tr[96];

		snprintf(tr, sizeof(tr), " transform=\"rotate(-90 %d %d)\"", 22, PT + PH / 2);
		svg_text(o, 22, PT + PH / 2, "middle", 15, "address", tr);
	}
	svg_text(o, PL + PW / 2, 30, "middle", 17, f->title, NULL);
	fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"%d\" fill=\"url(#scale)\" "
		"stroke=\"black\"/>\n", PL + PW + 40, PT, PH);
	for (int k = 0; k < 3; k++)
		svg_text(o, PL + PW + 68, PT + PH - PH * k / 2 + 4, "start", 13, f->st[k], NULL);
	svg_text(o, PL + PW + 51, PT - 12, "middle", 13, "nr_accesses", NULL);
	fputs("</svg>\n", o);
	return ferror(o) ? -EIO : 0;
}

/* ---------------------------------------------------------------- PNG */

#if UKS_HAVE_LIBPNG
/* 5x7 glyphs, one byte per row, bit 4 the leftmost column */
struct glyph {
	char c;
	unsigned char row[7];
};

static const struct glyph font[] = {
	{ '0', { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e } },
	{ '1', { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ '2', { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f } },
	{ '3', { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e } },
	{ '4', { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 } },
	{ '5', { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e } },
	{ '6', { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e } },
	{ '7', { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 } },
	{ '8', { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e } },
	{ '9', { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c } },
	{ '.', { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c } },
	{ '-', { 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00 } },
	{ ':', { 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00 } },
	{ '(', { 0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02 } },
	{ ')', { 0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08 } },
	{ '_', { 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f } },
	{ 'a', { 0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f } },
	{ 'b', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e } },
	{ 'c', { 0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e } },
	{ 'd', { 0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f } },
	{ 'e', { 0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e } },
	{ 'f', { 0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08 } },
	{ 'g', { 0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e } },
	{ 'h', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11 } },
	{ 'i', { 0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e } },
	{ 'j', { 0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c } },
	{ 'k', { 0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12 } },
	{ 'l', { 0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ 'm', { 0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11 } },
	{ 'n', { 0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11 } },
	{ 'o', { 0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e } },
	{ 'p', { 0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10 } },
	{ 'q', { 0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01 } },
	{ 'r', { 0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10 } },
	{ 's', { 0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e } },
	{ 't', { 0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06 } },
	{ 'u', { 0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d } },
	{ 'v', { 0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04 } },
	{ 'w', { 0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a } },
	{ 'x', { 0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11 } },
	{ 'y', { 0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e } },
	{ 'z', { 0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f } },
	{ 'A', { 0x0e, 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11 } },
	{ 'B', { 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e } },
	{ 'D', { 0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c } },
	{ 'G', { 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f } },
	{ 'K', { 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11 } },
	{ 'M', { 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11 } },
	{ 'N', { 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11 } },
	{ 'O', { 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e } },
	{ 'T', { 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04 } },
};

struct canvas {
	unsigned char px[IMG_H][IMG_W * 3];
};

static void put(struct canvas *cv, int x, int y, struct rgb c)
{
	if (x < 0 || y < 0 || x >= IMG_W || y >= IMG_H)
		return;
	cv->px[y][3 * x] = c.r;
	cv->px[y][3 * x + 1] = c.g;
	cv->px[y][3 * x + 2] = c.b;
}

static int text_width(const char *s, int scale)
{
	return (int)strlen(s) * 6 * scale;
}

/* Text with its top-left corner at (x, y); vertical: bottom to top at x. */
static void draw_text(struct canvas *cv, int x, int y, const char *s, int scale, bool vertical)
{
	static const struct rgb ink = { 0, 0, 0 };

	for (int n = 0; s[n]; n++) {
		const struct glyph *g = NULL;

		for (size_t k = 0; k < sizeof(font) / sizeof(font[0]) && !g; k++)
			if (font[k].c == s[n])
				g = &font[k];
		if (!g)
			continue;	/* spaces and glyphs we lack */
		for (int r = 0; r < 7; r++)
			for (int c = 0; c < 5; c++) {
				if (!(g->row[r] & (0x10 >> c)))
					continue;
				for (int dy = 0; dy < scale; dy++)
					for (int dx = 0; dx < scale; dx++) {
						int gx = (n * 6 + c) * scale + dx, gy = r * scale + dy;

						if (vertical)
							put(cv, x + gy, y - gx, ink);
						else
							put(cv, x + gx, y + gy, ink);
					}
			}
	}
}

static void hline(struct canvas *cv, int x0, int x1, int y)
{
	for (int x = x0; x <= x1; x++)
		put(cv, x, y, (struct rgb){ 0, 0, 0 });
}

static void vline(struct canvas *cv, int x, int y0, int y1)
{
	for (int y = y0; y <= y1; y++)
		put(cv, x, y, (struct rgb){ 0, 0, 0 });
}

static int write_png(const struct uks_damon_heatmap *hm, const struct frame *f, FILE *o)
{
	struct canvas *cv = malloc(sizeof(*cv));
	png_structp png;
	png_infop info;
	volatile int ret = 0;

	if (!cv)
		return -ENOMEM;
	memset(cv, 255, sizeof(*cv));
	for (int py = 0; py < PH; py++)
		for (int px = 0; px < PW; px++)
			put(cv, PL + px, PT + py, colour(heat_at(hm, f, px, py)));
	hline(cv, PL - 1, PL + PW, PT - 1);
	hline(cv, PL - 1, PL + PW, PT + PH);
	vline(cv, PL - 1, PT - 1, PT + PH);
	vline(cv, PL + PW, PT - 1, PT + PH);
	/* one size for every address label: the small one if any needs it */
	int ys = 2, title_w = text_width("nr_accesses", 2);

	for (int k = 0; k < NTICKS; k++)
		if (text_width(f->yt[k], 2) > PL - 40)
			ys = 1;
	for (int k = 0; k < NTICKS; k++) {
		int x = PL + PW * k / (NTICKS - 1), y = PT + PH - PH * k / (NTICKS - 1);
		int s = ys;

		vline(cv, x, PT + PH, PT + PH + 6);
		draw_text(cv, x - text_width(f->xt[k], 2) / 2, PT + PH + 12, f->xt[k], 2, false);
		hline(cv, PL - 7, PL - 1, y);
		draw_text(cv, PL - 12 - text_width(f->yt[k], s), y - 7 * s / 2, f->yt[k], s, false);
	}
	draw_text(cv, PL + PW / 2 - text_width("time (s)", 2) / 2, PT + PH + 40, "time (s)", 2,
		  false);
	draw_text(cv, 8, PT + PH / 2 + text_width("address", 2) / 2, "address", 2, true);
	draw_text(cv, PL + PW / 2 - text_width(f->title, 2) / 2, 14, f->title, 2, false);
	for (int y = 0; y < PH; y++)
		for (int x = 0; x < 22; x++)
			put(cv, PL + PW + 40 + x, PT + y, colour((double)(PH - 1 - y) / (PH - 1)));
	hline(cv, PL + PW + 39, PL + PW + 62, PT - 1);
	hline(cv, PL + PW + 39, PL + PW + 62, PT + PH);
	vline(cv, PL + PW + 39, PT - 1, PT + PH);
	vline(cv, PL + PW + 62, PT - 1, PT + PH);
	for (int k = 0; k < 3; k++)
		draw_text(cv, PL + PW + 68, PT + PH - PH * k / 2 - 7, f->st[k], 2, false);
	/* the scale's title in the size of its values, right-aligned if need be */
	draw_text(cv, PL + PW + 20 + title_w < IMG_W - 4 ? PL + PW + 20 : IMG_W - 4 - title_w,
		  PT - 22, "nr_accesses", 2, false);

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct(&png, NULL);
		free(cv);
		return -ENOMEM;
	}
	if (setjmp(png_jmpbuf(png))) {
		ret = -EIO;
	} else {
		png_init_io(png, o);
		png_set_IHDR(png, info, IMG_W, IMG_H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
			     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
		png_write_info(png, info);
		for (int y = 0; y < IMG_H; y++)
			png_write_row(png, cv->px[y]);
		png_write_end(png, NULL);
	}
	png_destroy_write_struct(&png, &info);
	free(cv);
	return ret;
}
#endif

/**
 * damon_heatmap_image - write @hm as a picture
 * @hm:		the heat pixels
 * @path:	FILE.png or FILE.svg
 * @abs_time:	absolute time tick labels
 * @abs_addr:	absolute address tick labels
 *
 * Return: 0, -EINVAL (another extension), -EOPNOTSUPP (PNG without
 * libpng), or the -errno of writing.
 */
int damon_heatmap_image(const struct uks_damon_heatmap *hm, const char *path, bool abs_time,
			bool abs_addr)
{
	const char *ext = strrchr(path, '.');
	bool svg = ext && !strcmp(ext, ".svg");
	struct frame f;
	FILE *o;
	int ret;

	if (!ext || (!svg && strcmp(ext, ".png")))
		return -EINVAL;
#if !UKS_HAVE_LIBPNG
	if (!svg)
		return -EOPNOTSUPP;
#endif
	frame_of(hm, abs_time, abs_addr, &f);
	o = fopen(path, "we");
	if (!o)
		return -errno;
#if UKS_HAVE_LIBPNG
	ret = svg ? write_svg(hm, &f, o) : write_png(hm, &f, o);
#else
	ret = write_svg(hm, &f, o);
#endif
	if (fclose(o) && !ret)
		ret = -errno;
	return ret;
}
