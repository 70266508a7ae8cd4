// SPDX-License-Identifier: MIT
/*
 * uks_trace_snprintf: printf for event print formats.  Standard
 * conversions go to the C library one at a time; the kernel's pointer
 * extensions that print formats use are done here:
 *   %pS / %pB	symbol+0xoffset/0xsize	(dladdr; raw address if unknown)
 *   %ps	symbol
 *   %p		the address as 16 hex digits (the kernel hashes it; user space
 *		has nothing to hide from itself, like no_hash_pointers)
 * gcc and clang check these formats as printf formats (%pS is %p then 'S'),
 * which is the reason the kernel chose that syntax.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uks/tracepoint.h>

#include "core/compiler.h"

struct out {
	char *buf;
	size_t len;
	size_t pos;		/* may pass len: we return the full length */
};

static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->pos < o->len) {
		size_t room = o->len - o->pos;

		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

/*
 * @spec is one conversion cut out of the caller's format after it was
 * parsed and checked, so it is not a literal by design.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void out_fmt(struct out *o, const char *spec, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, spec);
	n = vsnprintf(tmp, sizeof(tmp), spec, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		out_mem(o, tmp, n);
		return;
	}
	/* Wider than tmp (a long %s): print straight into the rest of buf. */
	if (o->pos < o->len) {
		va_start(ap, spec);
		vsnprintf(o->buf + o->pos, o->len - o->pos, spec, ap);
		va_end(ap);
	}
	o->pos += n;
}
#pragma GCC diagnostic pop

static void out_symbol(struct out *o, const void *addr, char kind)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (addr && dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname) {
		uintptr_t off = (uintptr_t)addr - (uintptr_t)info.dli_saddr;

		if (kind == 's')
			out_fmt(o, "%s", info.dli_sname);
		else
			out_fmt(o, "%s+0x%lx/0x%lx", info.dli_sname, (unsigned long)off,
				(unsigned long)(sym ? sym->st_size : 0));
		return;
	}
	out_fmt(o, "0x%lx", (unsigned long)(uintptr_t)addr);
}

/**
 * uks_trace_snprintf - format like snprintf, with the kernel's %pS/%ps
 * @buf:	destination (NUL-terminated when @len > 0)
 * @len:	its size
 * @fmt:	printf format
 *
 * Returns the length the full output has, as snprintf() does.
 */
UKS_EXPORT int uks_trace_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	struct out o = { buf, len, 0 };
	va_list ap;

	va_start(ap, fmt);
	while (*fmt) {
		const char *start = fmt, *lenmod;
		char spec[64];
		int lng = 0, stars = 0, star[2] = { 0, 0 };
		size_t n;
		char conv;

		if (*fmt != '%') {
			const char *pct = strchr(fmt, '%');

			n = pct ? (size_t)(pct - fmt) : strlen(fmt);
			out_mem(&o, fmt, n);
			fmt += n;
			continue;
		}
		/* %[flags][width][.prec][length]conv */
		fmt++;
		fmt += strspn(fmt, "-+ #0'");
		if (*fmt == '*') {
			stars++;
			fmt++;
		}
		fmt += strspn(fmt, "0123456789");
		if (*fmt == '.') {
			fmt++;
			if (*fmt == '*') {
				stars++;
				fmt++;
			}
			fmt += strspn(fmt, "0123456789");
		}
		lenmod = fmt;
		for (; *fmt && strchr("hlLqzjt", *fmt); fmt++)
			lng += *fmt == 'h' ? 0 : *fmt == 'l' ? 1 : 2;
		if (!*fmt)
			break;
		conv = *fmt++;
		n = (size_t)(lenmod - start);
		if (n + 4 > sizeof(spec)) {	/* absurd spec: print it as text */
			out_mem(&o, start, (size_t)(fmt - start));
			continue;
		}
		for (int i = 0; i < stars; i++)
			star[i] = va_arg(ap, int);
		/* Rebuild the spec with the length printf needs for the va_arg type. */
		memcpy(spec, start, n);
		spec[n] = '\0';
		switch (conv) {
		case '%':
			out_mem(&o, "%", 1);
			break;
		case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': {
			unsigned long long v;

			if (conv == 'd' || conv == 'i')
				v = lng >= 2 ? va_arg(ap, long long) :
				    lng ? va_arg(ap, long) : va_arg(ap, int);
			else
				v = lng >= 2 ? va_arg(ap, unsigned long long) :
				    lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
			spec[n] = 'l';
			spec[n + 1] = 'l';
			spec[n + 2] = conv;
			spec[n + 3] = '\0';
			if (stars == 2)
				out_fmt(&o, spec, star[0], star[1], v);
			else if (stars == 1)
				out_fmt(&o, spec, star[0], v);
			else
				out_fmt(&o, spec, v);
			break;
		}
		case 'c': case 's': case 'e': case 'E': case 'f': case 'F':
		case 'g': case 'G': case 'a': case 'A': {
			spec[n] = conv;
			spec[n + 1] = '\0';
			if (conv == 'c' || conv == 's') {
				const char *str = NULL;
				int ch = 0;

				if (conv == 's')
					str = va_arg(ap, const char *);
				else
					ch = va_arg(ap, int);
				if (!str)
					str = "(null)";
				if (stars == 2)
					conv == 's' ? out_fmt(&o, spec, star[0], star[1], str)
						    : out_fmt(&o, spec, star[0], star[1], ch);
				else if (stars == 1)
					conv == 's' ? out_fmt(&o, spec, star[0], str)
						    : out_fmt(&o, spec, star[0], ch);
				else
					conv == 's' ? out_fmt(&o, spec, str) : out_fmt(&o, spec, ch);
			} else {
				double d = 0;
				long double ld = 0;

				if (lng >= 2) {
					ld = va_arg(ap, long double);
					spec[n] = 'L';
					spec[n + 1] = conv;
					spec[n + 2] = '\0';
					out_fmt(&o, spec, ld);
				} else {
					d = va_arg(ap, double);
					out_fmt(&o, spec, d);
				}
			}
			break;
		}
		case 'p': {
			const void *p = va_arg(ap, const void *);

			if (*fmt == 'S' || *fmt == 'B' || *fmt == 's')
				out_symbol(&o, p, *fmt++);
			else
				out_fmt(&o, "%016lx", (unsigned long)(uintptr_t)p);
			break;
		}
		default:	/* unknown conversion: show it, consume nothing */
			out_mem(&o, start, (size_t)(fmt - start));
			break;
		}
	}
	va_end(ap);
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return (int)o.pos;
}
