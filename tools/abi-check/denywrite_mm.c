// SPDX-License-Identifier: MIT
/*
 * The mm half of the MAP_DENYWRITE-removal checks: the exe_file link of
 * PR_SET_MM_EXE_FILE / PR_SET_MM_MAP (refused while the new file has a
 * writer, write-denied while linked, released by relink, exec and exit)
 * and uselib(2).  See the top of denywrite.c for the method.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "denywrite.h"

/* ------------------------------------------- PR_SET_MM exe_file link */

/*
 * Move every mapping of our own executable onto anonymous memory with the
 * same bytes and protections, so that PR_SET_MM may replace exe_file.
 */
static int drop_exe_mappings(void)
{
	struct { uintptr_t lo, hi; int prot; } r[64];
	char exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t nr = 0;
	FILE *f;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (nr < 64 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		int off = 0;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 || !off)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line + off, exe))
			continue;
		r[nr].lo = lo;
		r[nr].hi = hi;
		r[nr].prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			     (perms[2] == 'x' ? PROT_EXEC : 0);
		nr++;
	}
	fclose(f);
	if (!nr)
		return -ENOENT;
	/*
	 * Copied by the kernel through /proc/self/mem rather than memcpy: a
	 * whole segment spans the redzones of a sanitizer build's globals.
	 */
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	if (mem < 0)
		return -errno;
	for (size_t i = 0; i < nr; i++) {
		size_t len = r[i].hi - r[i].lo;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED ||
		    ((r[i].prot & PROT_READ) && pread(mem, p, len, (off_t)r[i].lo) != (ssize_t)len) ||
		    mprotect(p, len, r[i].prot) ||
		    mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)r[i].lo) != (void *)r[i].lo) {
			int err = errno ? -errno : -EIO;

			close(mem);
			return err;
		}
	}
	close(mem);
	return dw_pid_maps_file(getpid(), exe) ? -EBUSY : 0;
}

/* The current mm layout from /proc/self/stat, as PR_SET_MM_MAP wants it. */
static int read_mm_map(struct dw_mm_map *m)
{
	unsigned long long v[52] = { 0 };
	char buf[2048], *s, *tok, *save = NULL;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 3;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	s = strrchr(buf, ')');
	if (!s)
		return -EIO;
	for (tok = strtok_r(s + 1, " \n", &save); tok && field < 52; tok = strtok_r(NULL, " \n", &save))
		v[field++] = strtoull(tok, NULL, 10);
	if (field < 52)
		return -EIO;
	memset(m, 0, sizeof(*m));
	m->start_code = v[26];
	m->end_code = v[27];
	m->start_stack = v[28];
	m->start_data = v[45];
	m->end_data = v[46];
	m->start_brk = v[47];
	m->arg_start = v[48];
	m->arg_end = v[49];
	m->env_start = v[50];
	m->env_end = v[51];
	m->brk = (uint64_t)syscall(SYS_brk, 0);
	return 0;
}

/* Link @fd as our exe_file: 0 or errno. */
static int set_exe(bool map, int fd)
{
	struct dw_mm_map m;
	int e;

	if (!map)
		return prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)fd, 0UL, 0UL) ? errno : 0;
	e = read_mm_map(&m);
	if (e)
		return -e;
	m.exe_fd = (uint32_t)fd;
	return prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&m, (unsigned long)sizeof(m), 0UL) ? errno : 0;
}

static bool exe_is(const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, path);
}

static void skip_all(int out, const char *v, const char *why, const char *e1, const char *e2)
{
	static const char *const names[] = { "refused-with-writer", "denies-write", "relink-releases" };

	for (size_t i = 0; i < 3; i++)
		dprintf(out, "SKIP %s-%s: %s%s%s\n", v, names[i], why, e1, e2);
}

/* The forked child of check_prctl(): "VERDICT name: detail" lines on @out. */
static void prctl_child(struct dw *d, bool map, int out, const char *b, const char *c)
{
	const char *v = map ? "prctl-mm-map" : "prctl-exe-file";
	const char *cap = map ? "CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN" : "CAP_SYS_RESOURCE";
	int e, refused, w, rb, rc;

	if (map && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		dprintf(out, "NOTRACE\n");
	e = drop_exe_mappings();
	if (e) {
		skip_all(out, v, "cannot move the executable's mappings to anonymous memory: ", dw_err_name(-e), "");
		return;
	}
	w = open(b, O_WRONLY | O_CLOEXEC);
	rb = open(b, O_RDONLY | O_CLOEXEC);
	rc = open(c, O_RDONLY | O_CLOEXEC);
	if (w < 0 || rb < 0 || rc < 0) {
		skip_all(out, v, "cannot open the link targets", "", "");
		return;
	}
	refused = set_exe(map, rb);
	if (refused == EPERM) {
		skip_all(out, v, "prctl not permitted: EPERM (needs ", cap, ")");
		return;
	}
	close(w);
	e = set_exe(map, rb);
	if (e) {
		skip_all(out, v, "prctl fails even with no writer: ", dw_err_name(e), "");
		return;
	}
	dprintf(out, "LINKED %s\n", b);
	if (refused == EACCES)
		dprintf(out, "PASS %s-refused-with-writer: with the new file open for writing: EACCES; once closed: success\n", v);
	else
		dprintf(out, "FAIL %s-refused-with-writer: observed prctl with the new file open for writing: %s, want EACCES\n",
			v, dw_err_name(refused));

	e = dw_try_open(b, O_WRONLY);
	if (e == ETXTBSY && exe_is(b))
		dprintf(out, "PASS %s-denies-write: /proc/self/exe -> the new file; open(O_WRONLY) of it: ETXTBSY\n", v);
	else
		dprintf(out, "FAIL %s-denies-write: observed open(O_WRONLY) of the file linked as /proc/self/exe: %s, want ETXTBSY\n",
			v, dw_err_name(e));

	e = set_exe(map, rc);
	if (e) {
		dprintf(out, "SKIP %s-relink-releases: relinking to a second file: %s\n", v, dw_err_name(e));
	} else {
		int eb = dw_try_open(b, O_WRONLY), ec = dw_try_open(c, O_WRONLY);

		dprintf(out, "LINKED %s\n", c);
		if (!eb && ec == ETXTBSY)
			dprintf(out, "PASS %s-relink-releases: after relinking, the old file opens O_WRONLY, the new one: ETXTBSY\n", v);
		else
			dprintf(out, "FAIL %s-relink-releases: observed open(O_WRONLY) of the old file: %s (want success), the new one: %s (want ETXTBSY)\n",
				v, dw_err_name(eb), dw_err_name(ec));
	}
	if (map) {
		char *argv[] = { d->prog, (char *)"--version", NULL };

		execv(d->prog, argv);
		dprintf(out, "NOEXEC %s\n", dw_err_name(errno));
	}
}

void dw_check_prctl(struct dw *d, bool map)
{
	const char *v = map ? "prctl-mm-map" : "prctl-exe-file";
	char b[PATH_MAX], c[PATH_MAX], line[PATH_MAX + 600], linked[sizeof(line)] = "", name[96];
	bool notrace = false, noexec = false;
	int p[2], st, e;
	pid_t pid;
	FILE *f;

	snprintf(b, sizeof(b), "%s/%s-b", d->dir, v);
	snprintf(c, sizeof(c), "%s/%s-c", d->dir, v);
	snprintf(name, sizeof(name), "%s-%s", v, map ? "exec-releases" : "exit-releases");
	if (dw_copy_file(d->prog, b, 0755) || dw_copy_file(d->prog, c, 0755) || pipe2(p, O_CLOEXEC)) {
		dw_say(d, ABI_SKIP, name, "cannot set up the link targets");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		prctl_child(d, map, p[1], b, c);
		_exit(0);
	}
	close(p[1]);
	f = pid > 0 ? fdopen(p[0], "r") : NULL;
	if (!f) {
		close(p[0]);
		if (pid > 0)
			dw_kill_child(pid);
		dw_say(d, ABI_SKIP, name, "fork failed");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon, *sp;
		enum abi_verdict vd;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "LINKED ", 7)) {
			snprintf(linked, sizeof(linked), "%s", line + 7);
			continue;
		}
		notrace |= !strcmp(line, "NOTRACE");
		noexec |= !strncmp(line, "NOEXEC ", 7);
		sp = strchr(line, ' ');
		colon = strstr(line, ": ");
		if (!sp || !colon || colon < sp)
			continue;
		vd = !strncmp(line, "PASS", 4) ? ABI_PASS : !strncmp(line, "FAIL", 4) ? ABI_FAIL : ABI_SKIP;
		*colon = '\0';
		dw_say(d, vd, sp + 1, "%s", colon + 2);
	}
	fclose(f);
	if (waitpid(pid, &st, 0) < 0) {
		dw_say(d, ABI_SKIP, name, "waitpid: %s", dw_err_name(errno));
		return;
	}
	if (!linked[0]) {
		if (WIFSTOPPED(st))
			dw_kill_child(pid);
		dw_say(d, ABI_SKIP, name, "no file was linked as /proc/PID/exe (see above)");
		return;
	}
	if (map) {
		if (!WIFSTOPPED(st)) {
			dw_say(d, ABI_SKIP, name, "the child did not stop after its execve() (%s)",
			    notrace ? "ptrace(PTRACE_TRACEME) not permitted" : noexec ? "exec failed" : "unexpected status");
			return;
		}
		e = dw_try_open(linked, O_WRONLY);
		dw_kill_child(pid);
		if (!e)
			dw_say(d, ABI_PASS, name, "after the linking task's execve(), the previously linked file opens O_WRONLY");
		else
			dw_say(d, ABI_FAIL, name, "observed open(O_WRONLY) of the previously linked file after execve(): %s, want success", dw_err_name(e));
		return;
	}
	e = dw_try_open(linked, O_WRONLY);
	if (!e)
		dw_say(d, ABI_PASS, name, "after the linking task exited, the linked file opens O_WRONLY");
	else
		dw_say(d, ABI_FAIL, name, "observed open(O_WRONLY) of the linked file after exit: %s, want success", dw_err_name(e));
}

/* ------------------------------------------------------------- uselib */

void dw_check_uselib(struct dw *d)
{
	static const char *name = "uselib-lib-writable";
#if defined(__x86_64__) && defined(SYS_uselib)
	unsigned char img[4096] = { 0 };
	char path[PATH_MAX];
	int p[2], res[3] = { 0, 0, 0 }, st;
	pid_t pid;
	void *hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t addr;

	if (hole == MAP_FAILED) {
		dw_say(d, ABI_SKIP, name, "mmap: %s", dw_err_name(errno));
		return;
	}
	munmap(hole, 8192);
	addr = (uint64_t)(uintptr_t)hole;
	/* ELF64 header: an x86-64 ET_EXEC with one program header. */
	memcpy(img, "\177ELF\2\1\1", 7);
	img[16] = 2;				/* ET_EXEC */
	img[18] = 62;				/* EM_X86_64 */
	img[20] = 1;				/* EV_CURRENT */
	img[32] = 64;				/* e_phoff */
	img[52] = 64;				/* e_ehsize */
	img[54] = 56;				/* e_phentsize */
	img[56] = 1;				/* e_phnum */
	/* PT_LOAD R, offset 0, vaddr = paddr = addr, filesz = memsz = 4096. */
	img[64] = 1;
	img[68] = 4;
	memcpy(img + 64 + 16, &addr, 8);
	memcpy(img + 64 + 24, &addr, 8);
	img[64 + 33] = 0x10;
	img[64 + 41] = 0x10;
	img[64 + 49] = 0x10;			/* p_align 4096 */
	snprintf(path, sizeof(path), "%s/uselib.so", d->dir);
	if (dw_write_all(path, img, sizeof(img)) || pipe2(p, O_CLOEXEC)) {
		dw_say(d, ABI_SKIP, name, "cannot write the library file");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		res[0] = syscall(SYS_uselib, path) ? errno : 0;
		if (!res[0]) {
			res[1] = dw_pid_maps_file(getpid(), path);
			res[2] = dw_try_open(path, O_WRONLY);
		}
		if (write(p[1], res, sizeof(res)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], res, sizeof(res)) != (ssize_t)sizeof(res)) {
		close(p[0]);
		if (pid > 0)
			waitpid(pid, &st, 0);
		dw_say(d, ABI_SKIP, name, "the uselib child failed");
		return;
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	if (res[0] == ENOSYS)
		dw_say(d, ABI_SKIP, name, "uselib(2) not available on this kernel (ENOSYS: CONFIG_USELIB off or the call removed)");
	else if (res[0])
		dw_say(d, ABI_SKIP, name, "uselib(2) refused the one-page ELF library: %s", dw_err_name(res[0]));
	else if (!res[1])
		dw_say(d, ABI_SKIP, name, "uselib(2) succeeded but the library is not mapped");
	else if (!res[2])
		dw_say(d, ABI_PASS, name, "open(O_WRONLY) of a library loaded with uselib(2) succeeds while mapped");
	else
		dw_say(d, ABI_FAIL, name, "observed open(O_WRONLY) of a uselib(2) library: %s, want success", dw_err_name(res[2]));
#else
	dw_say(d, ABI_SKIP, name, "uselib(2) not available: no such system call on this architecture");
#endif
}

