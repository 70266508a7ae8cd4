// SPDX-License-Identifier: MIT
/*
 * The fetch side of probe arguments: compiling FETCHARG (the part of a
 * probe argument between "NAME=" and ":TYPE") and running it against an
 * attached record.  probe_arg.c owns the words, types, record layout and
 * printing; this file owns where a value comes from.
 *
 * A compiled FETCHARG is a base (a record field, the writer's comm, an
 * immediate number or string) and up to PF_MAX_DEREF dereference offsets,
 * innermost first: the kernel's fetch_insn program of an eprobe flattened,
 * since its shape is always load, deref*, store, [bitfield], [loop].
 *
 * Memory is read with process_vm_readv(), from the process given at fetch
 * time (our own when pid <= 0): the kernel's copy_from_*_nofault() for a
 * user-space tracer.  An unmapped address costs -EFAULT, never a signal.
 * Nothing on the fetch path allocates.
 *
 * The private interface below is declared here and in probe_arg.c (the
 * public header, probe_arg.h, is the API; lib/trace has no private one for
 * probes yet).  Keep the two copies identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uks/slab.h>

#include "trace/field.h"
#include "trace/probe_fetch.h"

#define PF_MAX_BODY	63		/* MAX_ARGSTR_LEN */
#define PF_MAX_STRING	4096		/* MAX_STRING_SIZE = PATH_MAX */
/* FETCH_INSN_MAX (16) slots: the load, the dereferences, END last. */
#define PF_MAX_DEREF	14

/* The kernel's texts (trace_probe.h ERRORS; BAD_ATTACH_ARG is 6.0's). */
#define E_RETVAL_ON_PROBE	"$retval is not available on probe"
#define E_BAD_VAR		"Invalid $-valiable specified"
#define E_BAD_MEM_ADDR		"Invalid memory address"
#define E_BAD_IMM		"Invalid immediate value"
#define E_IMMSTR_NO_CLOSE	"String is not closed with '\"'"
#define E_FILE_ON_KPROBE	"File offset is not available with kprobe"
#define E_SYM_ON_UPROBE		"Symbol is not available with uprobe"
#define E_TOO_MANY_OPS		"Dereference is too much nested"
#define E_DEREF_NEED_BRACE	"Dereference needs a brace"
#define E_BAD_DEREF_OFFS	"Invalid dereference offset"
#define E_DEREF_OPEN_BRACE	"Dereference brace is not closed"
#define E_COMM_CANT_DEREF	"$comm can not be dereferenced"
#define E_BAD_FETCH_ARG		"Invalid fetch argument"
#define E_BAD_ATTACH_ARG	"Attached event does not have this field"

enum pa_base { PA_BASE_FIELD, PA_BASE_COMM, PA_BASE_IMM, PA_BASE_IMMSTR };

struct pa_fetch {
	enum pa_base base;
	/* PA_BASE_FIELD: a copy, so the caller's table may go away */
	unsigned int f_offset, f_size;
	bool f_signed;
	enum uks_field_filter_type f_kind;
	uint64_t imm;
	char immstr[PF_MAX_BODY + 1];
	int nderef;
	int64_t deref[PF_MAX_DEREF];	/* innermost first */
	/* The stored shape, from the argument's type (__uks_probe_fetch_shape). */
	unsigned int size;		/* of one element */
	bool string;
	unsigned int count;		/* array length, 0: scalar */
	bool bitfield;
	uint8_t lshift, rshift;
};

struct pf_parse {
	const struct uks_event_field *fields;
	size_t nr_fields;
	struct pa_fetch *f;
	const char *msg;
	int caret;
};

static int pa_fail(struct pf_parse *p, int ret, const char *msg, int offset)
{
	p->msg = msg;
	p->caret = offset;
	return ret;
}

/*
 * Unsigned number with the kernel's base rules (0x → 16, leading 0 → 8);
 * no sign, no space.  Returns the digits consumed, 0 on none or overflow.
 */
size_t __uks_probe_parse_ulong(const char *s, uint64_t *out)
{
	unsigned int base = 10;
	size_t i = 0;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    ((s[2] >= '0' && s[2] <= '9') || ((s[2] | 0x20) >= 'a' && (s[2] | 0x20) <= 'f'))) {
		base = 16;
		i = 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (size_t start = i;; i++) {
		unsigned int d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned int)((c | 0x20) - 'a' + 10);
		else
			return i > start || base == 8 ? i : 0;
		if (d >= base)
			return i > start || base == 8 ? i : 0;
		if (v > (UINT64_MAX - d) / base)
			return 0;
		v = v * base + d;
		*out = v;
	}
}

/* kstrtoul(s, 0): the whole string must be the number. */
bool __uks_probe_kstrtoul(const char *s, uint64_t *out)
{
	size_t n;

	*out = 0;
	if (*s == '+')
		s++;
	n = __uks_probe_parse_ulong(s, out);
	return n && !s[n];
}

/* kstrtol(s, 0) for a 64-bit long. */
static bool pa_kstrtol(const char *s, int64_t *out)
{
	uint64_t v;

	if (*s == '-') {
		if (!__uks_probe_kstrtoul(s + 1, &v) || v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = (int64_t)(0 - v);
		return true;
	}
	if (!__uks_probe_kstrtoul(s, &v) || v > INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/*
 * "$NAME": a field of the attached event, else the writer's comm for
 * comm/COMM, else an error.  5.15 checked retval/stack/comm before fields;
 * 6.0 made fields win, which is what we do.  Fields with no storage in the
 * record (the generic COMM/CPU ones) are not fields here.
 */
static int pa_parse_var(struct pf_parse *p, const char *name, int offs)
{
	const struct uks_event_field *f = NULL;

	for (size_t i = 0; i < p->nr_fields; i++)
		if (!strcmp(p->fields[i].name, name) &&
		    p->fields[i].filter_type != UKS_FILTER_COMM &&
		    p->fields[i].filter_type != UKS_FILTER_CPU) {
			f = &p->fields[i];
			break;
		}
	if (f) {
		p->f->base = PA_BASE_FIELD;
		p->f->f_offset = f->offset;
		p->f->f_size = f->size;
		p->f->f_signed = f->is_signed;
		p->f->f_kind = f->filter_type;
		return 0;
	}
	if (!strcmp(name, "comm") || !strcmp(name, "COMM")) {
		p->f->base = PA_BASE_COMM;
		return 0;
	}
	if (!strcmp(name, "retval"))
		return pa_fail(p, -EINVAL, E_RETVAL_ON_PROBE, offs);
	/* No stack in an event record: the 5.15 parser's words, not kprobe's. */
	if (!strncmp(name, "stack", 5) &&
	    (!name[5] || (name[5] >= '0' && name[5] <= '9')))
		return pa_fail(p, -EINVAL, E_BAD_VAR, offs);
	if (!*name)
		return pa_fail(p, -EINVAL, E_BAD_VAR, offs);
	return pa_fail(p, -ENOENT, E_BAD_ATTACH_ARG, offs);
}

/* "\imm" and "\"str" (immediates; 6.0 eprobes accept both). */
static int pa_parse_imm(struct pf_parse *p, char *arg, int offs)
{
	if (arg[1] == '"') {
		size_t len = strlen(arg + 2);

		if (!len || arg[2 + len - 1] != '"')
			return pa_fail(p, -EINVAL, E_IMMSTR_NO_CLOSE, offs + 2 + (int)len);
		memcpy(p->f->immstr, arg + 2, len - 1);
		p->f->immstr[len - 1] = '\0';
		p->f->base = PA_BASE_IMMSTR;
		return 0;
	}
	/* str_to_immediate(): unsigned, or signed after an explicit sign */
	if (arg[1] >= '0' && arg[1] <= '9') {
		if (__uks_probe_kstrtoul(arg + 1, &p->f->imm))
			goto ok;
	} else if (arg[1] == '-' || arg[1] == '+') {
		int64_t v;

		if (pa_kstrtol(arg + (arg[1] == '+' ? 2 : 1), &v)) {
			p->f->imm = (uint64_t)v;
			goto ok;
		}
	}
	return pa_fail(p, -EINVAL, E_BAD_IMM, offs + 1);
ok:
	p->f->base = PA_BASE_IMM;
	return 0;
}

/*
 * The recursive fetch-argument parser (parse_probe_arg).  @arg is a
 * writable copy; @offs is where it starts in the word, for the caret.
 */
static int pa_parse_fetch(struct pf_parse *p, char *arg, int offs)
{
	char *open, *close;
	int64_t offset;
	bool user = false;
	int inner, ret;

	switch (arg[0]) {
	case '$':
		return pa_parse_var(p, arg + 1, offs);
	case '%':	/* registers: there are none in a record (6.0's answer) */
		return pa_fail(p, -EINVAL, E_BAD_VAR, offs);
	case '@':
		if (arg[1] >= '0' && arg[1] <= '9')
			return pa_fail(p, -EINVAL, E_BAD_MEM_ADDR, offs);
		if (arg[1] == '+')	/* eprobes are kernel probes to the parser */
			return pa_fail(p, -EINVAL, E_FILE_ON_KPROBE, offs);
		/* A user-space probe cannot resolve kernel symbols: uprobe's rule. */
		return pa_fail(p, -EINVAL, E_SYM_ON_UPROBE, offs);
	case '\\':
		return pa_parse_imm(p, arg, offs);
	case '+':
	case '-':
		break;
	default:
		return pa_fail(p, -EINVAL, E_BAD_FETCH_ARG, offs);
	}

	/* +|-[u]OFFS(FETCHARG) */
	if (arg[1] == 'u')
		user = true;
	open = strchr(arg, '(');
	if (!open)
		return pa_fail(p, -EINVAL, E_DEREF_NEED_BRACE, offs);
	*open = '\0';
	{
		char num[PF_MAX_BODY + 2];
		const char *digits = arg + 1 + user;

		/* The sign belongs to the number, the 'u' does not. */
		snprintf(num, sizeof(num), "%s%s", arg[0] == '-' ? "-" : "", digits);
		if (!pa_kstrtol(num, &offset))
			return pa_fail(p, -EINVAL, E_BAD_DEREF_OFFS, offs);
	}
	/*
	 * The caret of what follows points at the inner argument; the
	 * kernel's arithmetic lands one byte early for the "u" forms, which we
	 * keep so error_log lines match.
	 */
	inner = offs + (int)(open + 1 - arg) - (user ? 1 : 0);
	arg = open + 1;
	close = strrchr(arg, ')');
	if (!close)
		return pa_fail(p, -EINVAL, E_DEREF_OPEN_BRACE, inner + (int)strlen(arg));
	/* Like the kernel, text after the last ')' is ignored. */
	*close = '\0';
	ret = pa_parse_fetch(p, arg, inner);
	if (ret)
		return ret;
	if (!p->f->nderef &&
	    (p->f->base == PA_BASE_COMM || p->f->base == PA_BASE_IMMSTR))
		return pa_fail(p, -EINVAL, E_COMM_CANT_DEREF, inner);
	if (p->f->nderef == PF_MAX_DEREF)
		return pa_fail(p, -EINVAL, E_TOO_MANY_OPS, inner);
	p->f->deref[p->f->nderef++] = offset;
	return 0;
}

/**
 * __uks_probe_fetch_parse - compile FETCHARG @arg (writable, type removed)
 * @offs:	where @arg starts in its word, for the caret
 * @out:	the compiled fetch, to free with __uks_probe_fetch_free()
 * @msg, @caret: the error text and its offset in the word on failure
 *
 * Returns 0, -EINVAL, -ENOENT (no such field) or -ENOMEM.
 */
int __uks_probe_fetch_parse(char *arg, int offs, const struct uks_event_field *fields,
			    size_t nr_fields, struct pa_fetch **out, const char **msg,
			    int *caret)
{
	struct pf_parse p = { fields, nr_fields, NULL, NULL, 0 };
	int ret;

	*out = NULL;
	p.f = uks_kzalloc(sizeof(*p.f));
	if (!p.f)
		return -ENOMEM;
	ret = pa_parse_fetch(&p, arg, offs);
	if (ret) {
		*msg = p.msg;
		*caret = p.caret;
		uks_kfree(p.f);
		return ret;
	}
	*out = p.f;
	return 0;
}

/** __uks_probe_fetch_free - release a compiled fetch (NULL ok) */
void __uks_probe_fetch_free(struct pa_fetch *f)
{
	uks_kfree(f);
}

/** __uks_probe_fetch_depth - the number of dereferences */
int __uks_probe_fetch_depth(const struct pa_fetch *f)
{
	return f->nderef;
}

/**
 * __uks_probe_fetch_is_text - is the value text we already hold (the
 * writer's comm or an immediate string), not a number or an address?
 */
bool __uks_probe_fetch_is_text(const struct pa_fetch *f)
{
	return !f->nderef && (f->base == PA_BASE_COMM || f->base == PA_BASE_IMMSTR);
}

/**
 * __uks_probe_fetch_shape - how the value is stored: @size bytes per
 * element (4 for a string's __data_loc), @count elements (0: scalar), and
 * the bitfield shifts of FETCH_OP_MOD_BF (@lshift < 0: none).
 */
void __uks_probe_fetch_shape(struct pa_fetch *f, unsigned int size, bool string,
			     unsigned int count, int lshift, int rshift)
{
	f->size = size;
	f->string = string;
	f->count = count;
	f->bitfield = lshift >= 0;
	f->lshift = (uint8_t)(lshift >= 0 ? lshift : 0);
	f->rshift = (uint8_t)(rshift >= 0 ? rshift : 0);
}

/*
 * Reads never cross a 4 KiB boundary, so one unmapped page after a short
 * string does not fail the read of the string (process_vm_readv does not
 * split an iovec element on a partial transfer).
 */
#define PF_CHUNK	4096u

/**
 * pf_mem_read - copy @len bytes at @addr in @pid (<= 0: ourselves)
 * Returns 0 or -EFAULT (unmapped, no such process, not permitted).
 */
static int pf_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote;

	if (!len)
		return 0;
	if ((uint64_t)(uintptr_t)addr != addr || addr + len < addr)
		return -EFAULT;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	if (pid <= 0)
		pid = getpid();
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

/**
 * pf_str_read - a NUL-terminated string at @addr in @pid
 * @dst:	where to copy it, or NULL to measure only
 * @maxlen:	bytes available, terminating NUL included
 *
 * Like strncpy_from_user_nofault(): a string longer than @maxlen is cut and
 * terminated, the return value then being @maxlen.  Returns the bytes used
 * (NUL included), 0 when @maxlen is 0, or -EFAULT.
 */
static long pf_str_read(pid_t pid, uint64_t addr, char *dst, size_t maxlen)
{
	char scratch[256];
	size_t done = 0;

	while (done < maxlen) {
		uint64_t at = addr + done;
		size_t n = PF_CHUNK - (size_t)(at & (PF_CHUNK - 1));
		char *to = dst ? dst + done : scratch;
		char *nul;

		if (n > maxlen - done)
			n = maxlen - done;
		if (!dst && n > sizeof(scratch))
			n = sizeof(scratch);
		if (at < addr || pf_mem_read(pid, at, to, n))
			return -EFAULT;
		nul = memchr(to, '\0', n);
		if (nul) {
			/* What followed the string in @pid is none of the record's business. */
			if (dst)
				memset(nul + 1, 0, (size_t)(to + n - nul - 1));
			return (long)(done + (size_t)(nul - to) + 1);
		}
		done += n;
	}
	if (dst && maxlen)
		dst[maxlen - 1] = '\0';
	return (long)maxlen;
}

/**
 * pf_comm - the writer's comm (the kernel's current->comm)
 *
 * Our own process: the calling thread's name, since the writer is the
 * thread that fires the event.  Another process: /proc/PID/comm.
 * Returns its length (at most 15) or -EFAULT.
 */
static int pf_comm(pid_t pid, char comm[16])
{
	char path[32];
	ssize_t n;
	int fd;

	memset(comm, 0, 16);
	if (pid <= 0 || pid == getpid()) {
		if (prctl(PR_GET_NAME, comm, 0, 0, 0))
			return -EFAULT;
		comm[15] = '\0';
		return (int)strlen(comm);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -EFAULT;
	n = read(fd, comm, 15);
	close(fd);
	if (n <= 0)
		return -EFAULT;
	comm[n] = '\0';
	if (comm[n - 1] == '\n')
		comm[--n] = '\0';
	return (int)n;
}

/* Little-endian loads and stores of a 1/2/4/8-byte value (fetch_store_raw). */
static uint64_t pf_get(const uint8_t *p, unsigned int size)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t q;

	switch (size) {
	case 1: memcpy(&b, p, 1); return b;
	case 2: memcpy(&h, p, 2); return h;
	case 4: memcpy(&w, p, 4); return w;
	default: memcpy(&q, p, 8); return q;
	}
}

static void pf_put(uint8_t *p, uint64_t v, unsigned int size)
{
	uint8_t b = (uint8_t)v;
	uint16_t h = (uint16_t)v;
	uint32_t w = (uint32_t)v;

	switch (size) {
	case 1: memcpy(p, &b, 1); break;
	case 2: memcpy(p, &h, 2); break;
	case 4: memcpy(p, &w, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/*
 * get_event_field() of 5.15: a field is read by its size, sign-extended
 * when signed; anything not 1, 2 or 4 bytes wide is read as a long (at
 * most the field's own bytes here, so a char[3] cannot read past itself).
 */
static bool pf_field_value(const struct pa_fetch *f, const uint8_t *src, size_t src_len,
			   uint64_t *val)
{
	unsigned int n = f->f_size < 8 ? f->f_size : 8;
	uint64_t v = 0;

	if (!src || !n || f->f_offset > src_len || src_len - f->f_offset < n)
		return false;
	if (n == 1 || n == 2 || n == 4 || n == 8) {
		v = pf_get(src + f->f_offset, n);
	} else {
		for (unsigned int i = 0; i < n; i++)
			v |= (uint64_t)src[f->f_offset + i] << (8 * i);
	}
	if (f->f_signed && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	*val = v;
	return true;
}

/*
 * Run the load and every dereference but the last; return the address the
 * last one reads (the store reads there: numbers, a string, or for an
 * array of strings the char * table).  No dereference: the value itself.
 */
static bool pf_walk(const struct pa_fetch *f, const uint8_t *src, size_t src_len, pid_t pid,
		    uint64_t *addr)
{
	uint64_t v;

	if (f->base == PA_BASE_IMM)
		v = f->imm;
	else if (f->base != PA_BASE_FIELD || !pf_field_value(f, src, src_len, &v))
		return false;
	for (int i = 0; i + 1 < f->nderef; i++)
		if (pf_mem_read(pid, v + (uint64_t)f->deref[i], &v, sizeof(v)))
			return false;
	*addr = f->nderef ? v + (uint64_t)f->deref[f->nderef - 1] : v;
	return true;
}

/*
 * String @j of @a into @dst (at most @maxlen bytes, NUL included, cut and
 * terminated like strncpy_from_kernel_nofault), or its length when @dst is
 * NULL.  Returns the bytes used or -EFAULT.  Strings that are already text
 * in the record or in our hands are copied; the rest are read from @pid.
 */
static long pf_string(const struct pa_fetch *f, unsigned int j, const uint8_t *src,
		      size_t src_len, pid_t pid, char *dst, size_t maxlen)
{
	const char *text = NULL;
	char comm[16];
	size_t tlen = 0;
	uint64_t addr;

	if (!f->nderef && f->base == PA_BASE_COMM) {
		int n = pf_comm(pid, comm);

		if (n < 0)
			return -EFAULT;
		text = comm;
		tlen = (size_t)n;
	} else if (!f->nderef && f->base == PA_BASE_IMMSTR) {
		text = f->immstr;
		tlen = strlen(text);
	} else if (!f->nderef && f->base == PA_BASE_FIELD &&
		   (f->f_kind == UKS_FILTER_STATIC_STRING || f->f_kind == UKS_FILTER_DYN_STRING)) {
		/* 6.0 "Fix reading of string fields": the text is in the record. */
		unsigned int off = f->f_offset, len = f->f_size;

		if (!src || off > src_len || src_len - off < len)
			return -EFAULT;
		if (f->f_kind == UKS_FILTER_DYN_STRING) {
			uint32_t loc;

			if (len < 4)
				return -EFAULT;
			memcpy(&loc, src + off, 4);
			off = uks_data_loc_offset(loc);
			len = uks_data_loc_len(loc);
			if (off > src_len || src_len - off < len)
				return -EFAULT;
		}
		text = (const char *)src + off;
		tlen = strnlen(text, len);
	}
	if (text) {
		size_t n = tlen + 1;

		if (n > PF_MAX_STRING)
			n = PF_MAX_STRING;
		if (!dst)
			return (long)n;
		if (!maxlen)
			return 0;
		if (n > maxlen)
			n = maxlen;
		memcpy(dst, text, n - 1);
		dst[n - 1] = '\0';
		return (long)n;
	}
	if (!pf_walk(f, src, src_len, pid, &addr))
		return -EFAULT;
	if (f->count &&
	    pf_mem_read(pid, addr + 8 * (uint64_t)j, &addr, sizeof(addr)))
		return -EFAULT;
	return pf_str_read(pid, addr, dst, dst ? maxlen : PF_MAX_STRING);
}

/* FETCH_OP_MOD_BF on the stored value. */
static void pf_bitfield(const struct pa_fetch *f, uint8_t *d)
{
	unsigned int size = f->size;
	uint64_t v = pf_get(d, size) << f->lshift;

	if (size < 8)
		v &= (1ULL << (size * 8)) - 1;
	pf_put(d, v >> f->rshift, size);
}

/**
 * __uks_probe_fetch_size - the string bytes this argument needs for @src
 * (get_eprobe_size: faults take no room).
 */
size_t __uks_probe_fetch_size(const struct pa_fetch *f, const uint8_t *src,
			      size_t src_len, pid_t pid)
{
	size_t total = 0;

	if (!f->string)
		return 0;
	for (unsigned int j = 0; j < (f->count ? f->count : 1); j++) {
		long n = pf_string(f, j, src, src_len, pid, NULL, 0);

		if (n > 0)
			total += (size_t)n;
	}
	return total;
}

/**
 * __uks_probe_fetch_store - store this argument at @offset of @rec
 * @dyn:	in: where the next string goes; out: past what was stored
 *
 * store_trace_args() for one argument: each string gets the room left in
 * @rec (at most MAX_STRING_SIZE) and a zero-length location when it faults,
 * which prints as (fault).  A number whose dereference faults stays 0 (the
 * caller cleared the words), and so does the rest of its array.
 */
void __uks_probe_fetch_store(const struct pa_fetch *f, const uint8_t *src, size_t src_len,
			     pid_t pid, uint8_t *rec, size_t rec_len, unsigned int offset,
			     size_t *dyn)
{
	unsigned int size = f->size, n = f->count ? f->count : 1;
	uint8_t *d = rec + offset;
	uint64_t addr;

	if (f->string) {
		for (unsigned int j = 0; j < n; j++) {
			/* A __data_loc holds 16-bit offsets and lengths. */
			size_t room = *dyn > 0xffff || *dyn > rec_len ? 0 : rec_len - *dyn;
			long got = 0;
			uint32_t loc;

			if (room > PF_MAX_STRING)
				room = PF_MAX_STRING;
			if (room)
				got = pf_string(f, j, src, src_len, pid, (char *)rec + *dyn, room);
			loc = uks_data_loc((unsigned int)*dyn, got > 0 ? (unsigned int)got : 0);
			memcpy(d + 4 * j, &loc, 4);
			if (got > 0)
				*dyn += (size_t)got;
		}
		return;
	}
	if (!f->nderef) {
		/* FETCH_OP_ST_RAW: the (sign-extended) value, truncated */
		uint64_t v;

		if (f->base == PA_BASE_IMM)
			pf_put(d, f->imm, size);
		else if (pf_field_value(f, src, src_len, &v))
			pf_put(d, v, size);
		if (f->bitfield)
			pf_bitfield(f, d);
		return;
	}
	if (!pf_walk(f, src, src_len, pid, &addr))
		return;
	for (unsigned int j = 0; j < n; j++) {
		if (pf_mem_read(pid, addr + (uint64_t)j * size, d + j * size, size)) {
			memset(d + j * size, 0, size);
			break;
		}
		if (f->bitfield)
			pf_bitfield(f, d + j * size);
	}
}
