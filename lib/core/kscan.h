/* SPDX-License-Identifier: MIT */
/*
 * The kernel's sscanf() "%lu", for files that parse as the kernel does.
 *
 * lib/vsprintf.c's vsscanf() skips white space (the kernel's isspace(),
 * which counts Latin-1's no-break space 0xa0), then wants a decimal digit:
 * no sign, so "-1" and "+7" do not parse, where glibc's strtoul() takes
 * both.  simple_strntoull() then reads the digits into 64 bits and wraps
 * past ULONG_MAX instead of saturating.
 */
#ifndef UKS_LIB_CORE_KSCAN_H
#define UKS_LIB_CORE_KSCAN_H

#include <stdbool.h>

static inline bool kscan_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static inline bool kscan_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/**
 * kscan_ulong - one "%lu" conversion at *@pos
 * @pos:	the text; on success moved past the digits (as "%n" counts)
 * @val:	the number, modulo 2^64
 * Return: true if a number was there.
 */
static inline bool kscan_ulong(const char **pos, unsigned long *val)
{
	const unsigned char *p = (const unsigned char *)*pos;
	unsigned long v = 0;

	while (kscan_isspace(*p))
		p++;
	if (!kscan_isdigit(*p))
		return false;
	while (kscan_isdigit(*p))
		v = v * 10 + (unsigned long)(*p++ - '0');
	*pos = (const char *)p;
	*val = v;
	return true;
}

#endif
