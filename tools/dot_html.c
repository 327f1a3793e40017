/* dot_html.c — see dot_html.h. The page's script and style are tools/html/viewer.html,
 * compiled in (viewer_page.h, made by scripts/embed_text.py): no file is read at run time
 * and the page loads nothing from the network. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dot_html.h"
#include "status.h"
#include "viewer_page.h"

/* The whole file at path, NUL-terminated, in *out (malloc'd). */
static om_kind read_all(const char *path, char **out, size_t *len, om_status *st)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return cmd_error(st, OM_ERR_IO, "cannot read the SVG back from '%s'", path);
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 65536) {
			char *b = realloc(buf, cap = cap * 2 + 65536);
			if (!b) {
				free(buf);
				fclose(f);
				return cmd_error(st, OM_ERR_NOMEM, "out of memory for the SVG");
			}
			buf = b;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (!got)
			break;
	}
	const bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return cmd_error(st, OM_ERR_IO, "cannot read the SVG back from '%s'", path);
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return OM_OK;
}

/* s with &, <, > and " escaped, appended to f */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The page: viewer_page with @TITLE@ and @SVG@ replaced. */
static om_kind page(const char *svg, const char *title, char **out, size_t *len, om_status *st)
{
	FILE *f = open_memstream(out, len);
	if (!f)
		return cmd_error(st, OM_ERR_NOMEM, "out of memory for the page");
	const char *t = strstr(viewer_page, "@TITLE@"), *s = strstr(viewer_page, "@SVG@");
	const char *from = strstr(svg, "<svg"); /* without the XML prolog and doctype */
	if (!t || !s || s < t || !from) {
		fclose(f);
		free(*out);
		*out = NULL;
		return cmd_error(st, OM_ERR_INTERNAL, "the viewer page or the SVG is not as expected");
	}
	fwrite(viewer_page, 1, (size_t)(t - viewer_page), f);
	put_escaped(f, title);
	t += strlen("@TITLE@");
	fwrite(t, 1, (size_t)(s - t), f);
	fputs(from, f);
	fputs(s + strlen("@SVG@"), f);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return cmd_error(st, OM_ERR_NOMEM, "out of memory for the page");
	}
	return OM_OK;
}

om_kind cli_dot_html(om_dot_renderer *r, const char *dot_text, size_t len, const char *title,
		     const char *path, om_status *st)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/omopt-dot-XXXXXX.svg", dir && *dir ? dir : "/tmp");
	int fd = mkstemps(tmp, 4);
	if (fd < 0)
		return cmd_error(st, OM_ERR_IO, "cannot make a temporary file '%s'", tmp);
	close(fd);
	char *svg = NULL, *html = NULL;
	size_t svg_len = 0, html_len = 0;
	om_kind k = om_dot_render(r, dot_text, len, "svg", tmp, st);
	if (!k)
		k = read_all(tmp, &svg, &svg_len, st);
	remove(tmp);
	if (!k)
		k = page(svg, title, &html, &html_len, st);
	if (!k)
		k = om_file_write(path, html, html_len, st);
	free(svg);
	free(html);
	return k;
}
