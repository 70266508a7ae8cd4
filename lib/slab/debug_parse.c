// SPDX-License-Identifier: MIT
/*
 * The slub_debug= syntax (5.15's setup_slub_debug(), parse_slub_debug_flags()
 * and kmem_cache_flags()), read from UKS_SLUB_DEBUG:
 *
 *   ""                      full debugging (FZPU) of every cache
 *   "FZ"                    those options for every cache
 *   "FZ,kmalloc-64,dent*"   only for the listed caches (trailing * globs)
 *   ",kmalloc-64"           full debugging for the listed caches
 *   "P,a;U,b;-"             several blocks; a block without a list sets
 *                           the global options
 *
 * Letters: F consistency checks, Z red zones, P poison, U user tracking,
 * T trace, A failslab, O no debug metadata where it raises the slab
 * order, - everything off.  Unknown letters are reported and skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "slab/slub.h"

#define DEBUG_DEFAULT_FLAGS (UKS_SLAB_CONSISTENCY_CHECKS | UKS_SLAB_RED_ZONE | \
			     UKS_SLAB_POISON | UKS_SLAB_STORE_USER)

/* The blocks with cache lists; the x86 kernel command line holds 2048 bytes. */
static char debug_string[2048];
static bool have_debug_string;
static unsigned long slub_debug;	/* global flags */
static bool disable_higher_order_debug;

/*
 * Parse one block at @str into @flags; @slabs gets its cache list (or
 * NULL).  Return: the next block, or NULL at the end.
 */
static const char *parse_block(const char *str, unsigned long *flags, const char **slabs,
			       bool init)
{
	bool higher_order_disable = false;

	while (*str == ';')
		str++;
	if (*str == ',') {
		/* No options but a cache list: full debugging for those. */
		*flags = DEBUG_DEFAULT_FLAGS;
		goto check_slabs;
	}
	*flags = 0;
	for (; *str && *str != ',' && *str != ';'; str++) {
		switch (tolower((unsigned char)*str)) {
		case '-':
			*flags = 0;
			break;
		case 'f':
			*flags |= UKS_SLAB_CONSISTENCY_CHECKS;
			break;
		case 'z':
			*flags |= UKS_SLAB_RED_ZONE;
			break;
		case 'p':
			*flags |= UKS_SLAB_POISON;
			break;
		case 'u':
			*flags |= UKS_SLAB_STORE_USER;
			break;
		case 't':
			*flags |= UKS_SLAB_TRACE;
			break;
		case 'a':
			*flags |= UKS_SLAB_FAILSLAB;
			break;
		case 'o':
			higher_order_disable = true;
			break;
		default:
			if (init)
				pr_err("slub_debug option '%c' unknown. skipped", *str);
		}
	}
check_slabs:
	*slabs = *str == ',' ? ++str : NULL;
	while (*str && *str != ';')
		str++;
	while (*str == ';')
		str++;
	if (init && higher_order_disable)
		disable_higher_order_debug = true;
	return *str ? str : NULL;
}

/**
 * __uks_slub_debug_parse - set up debugging from a slub_debug= value
 * @text: the value (what follows "slub_debug=")
 *
 * Return: 0, or -E2BIG for a value longer than 2047 bytes, more than a
 * kernel command line (COMMAND_LINE_SIZE) holds (ignored).
 */
int __uks_slub_debug_parse(const char *text)
{
	unsigned long flags, global_flags = DEBUG_DEFAULT_FLAGS;
	bool global_changed = false, list_specified = false;
	const char *str = text, *slab_list;

	slub_debug = 0;
	have_debug_string = false;
	disable_higher_order_debug = false;
	if (strlen(text) >= sizeof(debug_string)) {
		pr_err("slub_debug: option string too long, ignored");
		return -E2BIG;
	}
	if (!*str)
		goto out;	/* bare slub_debug: full debugging */
	while (str) {
		str = parse_block(str, &flags, &slab_list, true);
		if (!slab_list) {
			global_flags = flags;
			global_changed = true;
		} else {
			list_specified = true;
		}
	}
	/* Lists alone change only the listed caches. */
	if (list_specified) {
		if (!global_changed)
			global_flags = 0;
		strcpy(debug_string, text);
		have_debug_string = true;
	}
out:
	slub_debug = global_flags;
	return 0;
}

bool __uks_slub_debug_disable_higher_order(void)
{
	return disable_higher_order_debug;
}

/**
 * __uks_slub_debug_flags - a cache's flags with slub_debug applied
 * @name: cache name
 * @flags: flags the creator passed
 *
 * The first block whose list matches @name supplies its options;
 * otherwise the global ones apply.
 */
unsigned long __uks_slub_debug_flags(const char *name, unsigned long flags)
{
	unsigned long block_flags, debug_local = slub_debug;
	const char *next_block = have_debug_string ? debug_string : NULL, *iter;
	size_t len = strlen(name);

	if (flags & UKS_SLAB_NOLEAKTRACE)
		debug_local &= ~UKS_SLAB_STORE_USER;

	while (next_block) {
		next_block = parse_block(next_block, &block_flags, &iter, false);
		if (!iter)
			continue;
		while (*iter) {
			const char *end = strchrnul(iter, ','), *glob;
			size_t cmplen;

			/*
			 * Stop at this block's end.  The kernel tests "<" and so
			 * runs into a next block that starts with ',' (found by
			 * fuzzing); "<=" keeps the walk inside the block.
			 */
			if (next_block && next_block <= end)
				end = next_block - 1;
			if (end < iter)
				break;
			glob = memchr(iter, '*', (size_t)(end - iter));
			if (glob)
				cmplen = (size_t)(glob - iter);
			else
				cmplen = len > (size_t)(end - iter) ? len : (size_t)(end - iter);
			if (!strncmp(name, iter, cmplen))
				return flags | block_flags;
			if (!*end || *end == ';')
				break;
			iter = end + 1;
		}
	}
	return flags | debug_local;
}
