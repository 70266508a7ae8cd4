// SPDX-License-Identifier: MIT
/*
 * slub_debug reports in the 5.15 format (slab_bug(), slab_fix(),
 * print_trailer(), print_track(), object_err(), slab_err(),
 * check_bytes_and_report()), printed line by line through the uks log
 * callback at error level, and alloc/free tracks with call stacks.
 *
 * Differences a reader of kernel logs should know: "%pS" symbols come
 * from dladdr1() (function+offset/size, or a bare address without a
 * symbol), "age=" is in milliseconds (HZ=1000), pointers print unhashed
 * as 16 hex digits (the kernel does the same once slub_debug is on), and
 * dump_stack() prints this thread's user-space stack.
 *
 * While a test sets __uks_slab_kunit_errors, reports and fixes are counted
 * and not printed, as lib/slub_kunit.c's "slab_errors" resource does.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "slab/debug.h"
#include "slab/policy.h"
#include "slab/slub.h"

__thread int *__uks_slab_kunit_errors;
__thread int *__uks_slab_error_tally;
static atomic_bool tainted_bad_page;

/*
 * Count one report or fix.  Return: true when a kunit-style test collects
 * them, and the message must not be printed.
 */
bool __uks_slab_add_kunit_errors(void)
{
	if (__uks_slab_error_tally)
		(*__uks_slab_error_tally)++;
	if (!__uks_slab_kunit_errors)
		return false;
	(*__uks_slab_kunit_errors)++;
	return true;
}

static const char *print_tainted(void)
{
	/* 18 taint flags in 5.15; only TAINT_BAD_PAGE ('B', the 6th) is ours. */
	return atomic_load(&tainted_bad_page) ? "Tainted: G    B            " : "Not tainted";
}

static void add_taint(void)
{
	atomic_store(&tainted_bad_page, true);
}

/* "%pS": symbol+offset/size, from the dynamic symbol tables. */
void __uks_format_symbol(char *buf, size_t len, unsigned long addr)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname &&
	    info.dli_saddr) {
		snprintf(buf, len, "%s+0x%lx/0x%lx", info.dli_sname,
			 addr - (unsigned long)info.dli_saddr, sym ? (unsigned long)sym->st_size : 0UL);
	} else if (info.dli_fname && info.dli_fbase) {
		const char *base = strrchr(info.dli_fname, '/');

		snprintf(buf, len, "%s+0x%lx", base ? base + 1 : info.dli_fname,
			 addr - (unsigned long)info.dli_fbase);
	} else {
		snprintf(buf, len, "0x%lx", addr);
	}
}

/* The policy's unwinder (libgcc's, or glibc's backtrace()): see policy.h. */
void __uks_stack_trace_prepare(void)
{
	__uks_slab_policy->stack_trace_prepare();
}

/* The caller's stack, innermost first, skipping @skip frames. */
__attribute__((noinline)) unsigned int __uks_stack_trace(unsigned long *addrs, unsigned int max,
							  unsigned int skip)
{
	unsigned int n = __uks_slab_policy->stack_trace(addrs, max, skip + 1);

	/* Not a tail call: the frame skipped above is this one. */
	__asm__ __volatile__("" ::: "memory");
	return n;
}

void __uks_dump_stack(enum uks_log_level level)
{
	unsigned long addrs[32];
	unsigned int n = __uks_stack_trace(addrs, 32, 1);
	char comm[32] = "", sym[256];
	/* No stdio: a report may run inside a preloaded malloc. */
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t len = read(fd, comm, sizeof(comm) - 1);

		comm[len > 0 ? len : 0] = 0;
		comm[strcspn(comm, "\n")] = 0;
		close(fd);
	}
	__uks_log(level, "CPU: %d PID: %d Comm: %s %s uks %s", uks_cpu_current(), (int)getpid(),
		  comm, print_tainted(), uks_version());
	__uks_log(level, "Call Trace:");
	for (unsigned int i = 0; i < n; i++) {
		__uks_format_symbol(sym, sizeof(sym), addrs[i]);
		__uks_log(level, " %s", sym);
	}
}

/* print_hex_dump(DUMP_PREFIX_ADDRESS, rowsize 16, groupsize 1, ascii). */
void __uks_print_section(enum uks_log_level level, const char *text, const uint8_t *addr,
			 size_t length)
{
	for (size_t off = 0; off < length; off += 16) {
		size_t n = length - off < 16 ? length - off : 16;
		char line[128];
		int lx = 0;

		for (size_t j = 0; j < n; j++)
			lx += snprintf(line + lx, sizeof(line) - (size_t)lx, "%02x ", addr[off + j]);
		if (n)
			lx--;
		while (lx < 49)
			line[lx++] = ' ';
		for (size_t j = 0; j < n; j++) {
			uint8_t ch = addr[off + j];

			line[lx++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '.';
		}
		line[lx] = 0;
		__uks_log(level, "%s%016lx: %s", text, (unsigned long)(addr + off), line);
	}
}

static void print_track(const char *s, const struct slub_track *t, unsigned long pr_time)
{
	char sym[256];

	if (!t->addr)
		return;
	__uks_format_symbol(sym, sizeof(sym), t->addr);
	pr_err("%s in %s age=%lu cpu=%u pid=%d", s, sym, pr_time - t->when, t->cpu, t->pid);
	for (unsigned int i = 0; i < SLUB_TRACK_ADDRS && t->addrs[i]; i++) {
		__uks_format_symbol(sym, sizeof(sym), t->addrs[i]);
		pr_err("\t%s", sym);
	}
}

void __uks_print_tracking(struct uks_kmem_cache *s, void *object)
{
	unsigned long pr_time = __uks_jiffies();

	if (!(s->flags & UKS_SLAB_STORE_USER))
		return;
	print_track("Allocated", __uks_get_track(s, object, TRACK_ALLOC), pr_time);
	print_track("Freed", __uks_get_track(s, object, TRACK_FREE), pr_time);
}

static void print_page_info(struct uks_page *page)
{
	/* flags: PG_slab (bit 9 in 5.15's pageflags), plus PG_head for order > 0. */
	unsigned long flags = (1UL << 9) | (page->order ? 1UL << 16 : 0);

	pr_err("Slab 0x%016lx objects=%u used=%u fp=0x%016lx flags=%#lx(%s)",
	       (unsigned long)page, page->objects, page->inuse, (unsigned long)page->freelist,
	       flags, page->order ? "slab|head" : "slab");
}

static void slab_bug(struct uks_kmem_cache *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void slab_bug(struct uks_kmem_cache *s, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pr_err("=============================================================================");
	pr_err("BUG %s (%s): %s", s->name, print_tainted(), what);
	pr_err("-----------------------------------------------------------------------------");
	pr_err("%s", "");
}

void __uks_slab_fix(struct uks_kmem_cache *s, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (__uks_slab_add_kunit_errors())
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pr_err("FIX %s: %s", s->name, what);
}

static void print_trailer(struct uks_kmem_cache *s, struct uks_page *page, uint8_t *p)
{
	uint8_t *addr = slab_address(page);
	unsigned int off;

	__uks_print_tracking(s, p);
	print_page_info(page);
	pr_err("Object 0x%016lx @offset=%td fp=0x%016lx", (unsigned long)p, p - addr,
	       (unsigned long)get_freepointer(s, p));
	pr_err("%s", "");
	if (s->flags & UKS_SLAB_RED_ZONE)
		__uks_print_section(UKS_LOG_ERR, "Redzone  ", p - s->red_left_pad, s->red_left_pad);
	else if (p > addr + 16)
		__uks_print_section(UKS_LOG_ERR, "Bytes b4 ", p - 16, 16);
	__uks_print_section(UKS_LOG_ERR, "Object   ", p,
			    s->object_size < __uks_page_size ? s->object_size : __uks_page_size);
	if (s->flags & UKS_SLAB_RED_ZONE)
		__uks_print_section(UKS_LOG_ERR, "Redzone  ", p + s->object_size, s->inuse - s->object_size);
	off = __uks_get_info_end(s);
	if (s->flags & UKS_SLAB_STORE_USER)
		off += 2 * SLUB_TRACK_SIZE;
	if (off != __uks_size_from_object(s))
		/* The filler starts at the free pointer. */
		__uks_print_section(UKS_LOG_ERR, "Padding  ", p + off, __uks_size_from_object(s) - off);
	__uks_dump_stack(UKS_LOG_ERR);
}

void __uks_object_err(struct uks_kmem_cache *s, struct uks_page *page, void *object,
		      const char *reason)
{
	if (__uks_slab_add_kunit_errors())
		return;
	slab_bug(s, "%s", reason);
	print_trailer(s, page, object);
	add_taint();
}

void __uks_slab_err(struct uks_kmem_cache *s, struct uks_page *page, const char *fmt, ...)
{
	char buf[100];
	va_list ap;

	if (__uks_slab_add_kunit_errors())
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	slab_bug(s, "%s", buf);
	print_page_info(page);
	__uks_dump_stack(UKS_LOG_ERR);
	add_taint();
}

void __uks_restore_bytes(struct uks_kmem_cache *s, const char *message, uint8_t data, void *from,
			 void *to)
{
	__uks_slab_fix(s, "Restoring %s 0x%016lx-0x%016lx=0x%x", message, (unsigned long)from,
		       (unsigned long)to - 1, data);
	memset(from, data, (size_t)((char *)to - (char *)from));
}

/**
 * __uks_memchr_inv - the first byte of @bytes at @start that is not @value
 *
 * Return: its address, or NULL if all are @value.  Every debug allocation
 * and free checks red zones, poison and slab padding with it: a byte
 * loop was 29% of bench/malloc-peers' mixed pattern under FZPU, so it
 * compares 32 bytes per step, as the kernel's memchr_inv() compares 8.
 */
uint8_t *__uks_memchr_inv(const void *start, uint8_t value, size_t bytes)
{
	const uint8_t *p = start, *end = p + bytes;
	const uint64_t pattern = 0x0101010101010101ULL * value;

	while (end - p >= 32) {
		uint64_t w[4];

		memcpy(w, p, sizeof(w));
		if ((w[0] ^ pattern) | (w[1] ^ pattern) | (w[2] ^ pattern) | (w[3] ^ pattern))
			break;
		p += 32;
	}
	for (; p < end; p++)
		if (*p != value)
			return (uint8_t *)p;
	return NULL;
}

/* Check @bytes at @start all equal @value; report and restore them if not. */
int __uks_check_bytes_and_report(struct uks_kmem_cache *s, struct uks_page *page,
				 uint8_t *object, const char *what, uint8_t *start,
				 unsigned int value, unsigned int bytes)
{
	uint8_t *addr = slab_address(page);
	uint8_t *fault = __uks_memchr_inv(start, (uint8_t)value, bytes), *end;

	if (!fault)
		return 1;
	end = start + bytes;
	while (end > fault && end[-1] == value)
		end--;
	if (!__uks_slab_add_kunit_errors()) {
		slab_bug(s, "%s overwritten", what);
		pr_err("0x%016lx-0x%016lx @offset=%td. First byte 0x%x instead of 0x%x",
		       (unsigned long)fault, (unsigned long)(end - 1), fault - addr, fault[0], value);
		print_trailer(s, page, object);
		add_taint();
	}
	__uks_restore_bytes(s, what, (uint8_t)value, fault, end);
	return 0;
}
