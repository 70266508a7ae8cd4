// SPDX-License-Identifier: MIT
/*
 * The MAP_DENYWRITE-removal checks (Linux 5.15, seed 001) against the
 * running kernel, in the spirit of LTP's creat07 and execve04.
 *
 * Everything works on copies in a private scratch directory, so nothing
 * outside it is ever opened for writing:
 *
 *  - a running program is a copy of an executable started under
 *    PTRACE_TRACEME: the child stops with SIGTRAP once execve(2) has
 *    completed, so the program is "running" (its mm's exe_file is the
 *    copy) without our having to know any of its options;
 *  - the interpreter check copies a dynamically linked program and its
 *    loader, and rewrites the copy's PT_INTERP to name the copied loader
 *    (the new path is shorter, padded with NULs), so the loader the
 *    kernel maps is one we may open for writing;
 *  - PR_SET_MM_EXE_FILE / PR_SET_MM_MAP refuse to replace exe_file while
 *    the old one is still mapped (EBUSY), so the child first moves every
 *    mapping of its own executable onto anonymous memory (copy, then
 *    mremap(MREMAP_FIXED) over the original: the bytes at every address
 *    stay the same, the backing file goes away);
 *  - uselib(2) gets a one-page ET_EXEC file with a single PT_LOAD written
 *    here, the shape load_elf_library() accepts.
 *
 * Children report their results as "VERDICT name: detail" lines on a
 * pipe; the parent turns each into a report callback.
 *
 * Lock order: none (single-threaded; children are forked).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/sched.h>

#include "denywrite.h"

void dw_say(struct dw *d, enum abi_verdict v, const char *name, const char *fmt, ...)
{
	struct abi_result r = { .name = name, .verdict = v };
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	r.detail = detail;
	if (v == ABI_FAIL)
		d->fails++;
	d->report(&r, d->arg);
}

/* "ETXTBSY", "success", ... for details. */
const char *dw_err_name(int err)
{
	static char buf[32];

	switch (err) {
	case 0: return "success";
	case ETXTBSY: return "ETXTBSY";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case ENOEXEC: return "ENOEXEC";
	case ENOENT: return "ENOENT";
	default:
		snprintf(buf, sizeof(buf), "errno %d", err);
		return buf;
	}
}

int dw_copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/* 0 if open(path, flags) succeeds (the fd is closed again), else errno. */
int dw_try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0755);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/*
 * Fork, PTRACE_TRACEME, execv(path): on return the child is stopped right
 * after a successful execve(2).  0 and *pid, or the errno the child saw
 * (its ptrace or its exec) with no child left.
 */
static int spawn_stopped(const char *path, pid_t *pid)
{
	char *argv[] = { (char *)path, (char *)"--version", NULL };
	int p[2], err = 0, st;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	*pid = fork();
	if (*pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (*pid == 0) {
		close(p[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execv(path, argv);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
		err = 0;
	close(p[0]);
	if (waitpid(*pid, &st, 0) < 0)
		return errno;
	if (err)
		return err;
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return ECHILD;
	return 0;
}

void dw_kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Is @path mapped in /proc/@pid/maps? */
bool dw_pid_maps_file(pid_t pid, const char *path)
{
	char name[64], line[PATH_MAX + 128];
	bool found = false;
	size_t plen = strlen(path);
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *s = strchr(line, '/');

		found = s && !strncmp(s, path, plen) && (s[plen] == '\n' || !s[plen]);
	}
	fclose(f);
	return found;
}

/* -------------------------------------------------------- running exe */

static void check_running(struct dw *d)
{
	off_t size = file_size(d->prog);
	pid_t pid;
	int err = spawn_stopped(d->prog, &pid), e;

	if (err) {
		const char *why = err == EPERM ? "ptrace(PTRACE_TRACEME) not permitted" : "exec failed";

		dw_say(d, ABI_SKIP, "exe-open-wronly", "%s: %s", why, dw_err_name(err));
		dw_say(d, ABI_SKIP, "exe-open-rdwr-trunc", "%s: %s", why, dw_err_name(err));
		dw_say(d, ABI_SKIP, "exe-creat", "%s: %s", why, dw_err_name(err));
		dw_say(d, ABI_SKIP, "exe-writable-after-exit", "%s: %s", why, dw_err_name(err));
		return;
	}
	e = dw_try_open(d->prog, O_WRONLY);
	if (e == ETXTBSY)
		dw_say(d, ABI_PASS, "exe-open-wronly", "open(O_WRONLY) of a running executable: ETXTBSY");
	else
		dw_say(d, ABI_FAIL, "exe-open-wronly", "observed open(O_WRONLY) of a running executable: %s, want ETXTBSY", dw_err_name(e));

	e = dw_try_open(d->prog, O_RDWR | O_TRUNC);
	if (e == ETXTBSY && file_size(d->prog) == size)
		dw_say(d, ABI_PASS, "exe-open-rdwr-trunc", "open(O_RDWR|O_TRUNC): ETXTBSY, size unchanged (%lld bytes)", (long long)size);
	else
		dw_say(d, ABI_FAIL, "exe-open-rdwr-trunc", "observed open(O_RDWR|O_TRUNC): %s, size %lld -> %lld, want ETXTBSY and no change",
		    dw_err_name(e), (long long)size, (long long)file_size(d->prog));

	int fd = creat(d->prog, 0755);

	e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (e == ETXTBSY && file_size(d->prog) == size)
		dw_say(d, ABI_PASS, "exe-creat", "creat() of a running executable: ETXTBSY (creat07)");
	else
		dw_say(d, ABI_FAIL, "exe-creat", "observed creat(): %s, size %lld -> %lld, want ETXTBSY",
		    dw_err_name(e), (long long)size, (long long)file_size(d->prog));

	dw_kill_child(pid);
	e = dw_try_open(d->prog, O_WRONLY);
	if (!e)
		dw_say(d, ABI_PASS, "exe-writable-after-exit", "open(O_WRONLY) succeeds once the program is gone");
	else
		dw_say(d, ABI_FAIL, "exe-writable-after-exit", "observed open(O_WRONLY) after the program exited: %s", dw_err_name(e));
}

/* ------------------------------------------------- exec while writable */

static void check_exec_writer(struct dw *d)
{
	int fd = open(d->prog, O_WRONLY | O_CLOEXEC);
	pid_t pid;
	int err;

	if (fd < 0) {
		dw_say(d, ABI_SKIP, "exec-while-open-for-write", "cannot open the copy for writing: %s", dw_err_name(errno));
		return;
	}
	err = spawn_stopped(d->prog, &pid);
	close(fd);
	if (err == ETXTBSY)
		dw_say(d, ABI_PASS, "exec-while-open-for-write", "execve() of a file open for writing: ETXTBSY (execve04)");
	else if (err == EPERM)
		dw_say(d, ABI_SKIP, "exec-while-open-for-write", "ptrace(PTRACE_TRACEME) not permitted");
	else if (!err) {
		dw_kill_child(pid);
		dw_say(d, ABI_FAIL, "exec-while-open-for-write", "observed execve() of a file open for writing succeeded, want ETXTBSY");
	} else
		dw_say(d, ABI_FAIL, "exec-while-open-for-write", "observed execve(): %s, want ETXTBSY", dw_err_name(err));
}

/* ------------------------------------------------------------- dlopen */

static void check_dlopen(struct dw *d)
{
	char lib[PATH_MAX], copy[PATH_MAX];
	const char *src = d->opts->lib;
	void *h;
	int e;

	if (!src) {
		struct link_map *lm = NULL;

		h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name[0]) {
			dw_say(d, ABI_SKIP, "dlopen-lib-writable", "no shared library to copy (dlopen libm.so.6: %s)",
			    h ? "no path" : dlerror());
			if (h)
				dlclose(h);
			return;
		}
		snprintf(lib, sizeof(lib), "%s", lm->l_name);
		dlclose(h);
		src = lib;
	}
	snprintf(copy, sizeof(copy), "%s/lib.so", d->dir);
	e = dw_copy_file(src, copy, 0755);
	if (e) {
		dw_say(d, ABI_SKIP, "dlopen-lib-writable", "cannot copy %s: %s", src, dw_err_name(-e));
		return;
	}
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		dw_say(d, ABI_SKIP, "dlopen-lib-writable", "dlopen of a copy of %s: %s", src, dlerror());
		return;
	}
	if (!dw_pid_maps_file(getpid(), copy)) {
		dw_say(d, ABI_SKIP, "dlopen-lib-writable", "the copy of %s is not mapped after dlopen", src);
		dlclose(h);
		return;
	}
	e = dw_try_open(copy, O_WRONLY);
	if (!e)
		dw_say(d, ABI_PASS, "dlopen-lib-writable", "open(O_WRONLY) of a dlopen'ed copy of %s succeeds while mapped", src);
	else
		dw_say(d, ABI_FAIL, "dlopen-lib-writable", "observed open(O_WRONLY) of a dlopen'ed library: %s, want success", dw_err_name(e));
	dlclose(h);
}

/* -------------------------------------------------------- interpreter */

static int read_all(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (1 << 30)) {
		close(fd);
		return -EINVAL;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	for (size_t got = 0; got < *len;) {
		ssize_t n = read(fd, *buf + got, *len - got);

		if (n <= 0) {
			err = n ? -errno : -EIO;
			free(*buf);
			*buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	return err;
}

int dw_write_all(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static const char *find_dynexe(struct dw *d, struct uks_elf_info *info)
{
	static const char *const usual[] = { "/bin/true", "/usr/bin/true", "/bin/sh", "/bin/ls", "/usr/bin/env" };
	const char *own[] = { d->opts->dynexe, d->opts->exe ? d->opts->exe : "/proc/self/exe" };

	for (size_t i = 0; i < 2; i++)
		if (own[i] && !uks_elf_read_file(own[i], info) && info->interp_size)
			return own[i];
	for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
		if (!uks_elf_read_file(usual[i], info) && info->interp_size)
			return usual[i];
	return NULL;
}

static void check_interp_at(struct dw *d, const char *ld);

/* The loader copy needs a path no longer than the original: /tmp if need be. */
static void check_interp(struct dw *d)
{
	char ld[PATH_MAX], shortdir[] = "/tmp/uksdi.XXXXXX";
	bool own = strlen(d->dir) + sizeof("/ld") > sizeof("/lib/ld-linux.so.2");

	if (own && !mkdtemp(shortdir)) {
		dw_say(d, ABI_SKIP, "interp-writable-after-exec", "mkdtemp %s: %s", shortdir, dw_err_name(errno));
		return;
	}
	snprintf(ld, sizeof(ld), "%s/ld", own ? shortdir : d->dir);
	check_interp_at(d, ld);
	if (own) {
		unlink(ld);
		rmdir(shortdir);
	}
}

static void check_interp_at(struct dw *d, const char *ld)
{
	static const char *name = "interp-writable-after-exec";
	char dyn[PATH_MAX], interp[PATH_MAX];
	struct uks_elf_info info;
	const char *src = find_dynexe(d, &info);
	unsigned char *img = NULL;
	size_t len = 0;
	pid_t pid;
	int e;

	if (!src) {
		dw_say(d, ABI_SKIP, name, "no dynamically linked program found (the uks binary and /bin/true, /bin/sh, ... are static or missing)");
		return;
	}
	snprintf(dyn, sizeof(dyn), "%s/dyn", d->dir);
	if (strlen(ld) + 1 > info.interp_size) {
		dw_say(d, ABI_SKIP, name, "scratch path %s longer than the PT_INTERP of %s", ld, src);
		return;
	}
	e = read_all(src, &img, &len);
	if (e || info.interp_off + info.interp_size > len) {
		dw_say(d, ABI_SKIP, name, "cannot read %s: %s", src, dw_err_name(e ? -e : EINVAL));
		free(img);
		return;
	}
	snprintf(interp, sizeof(interp), "%s", (const char *)img + info.interp_off);
	e = dw_copy_file(interp, ld, 0755);
	if (e) {
		dw_say(d, ABI_SKIP, name, "cannot copy the interpreter %s: %s", interp, dw_err_name(-e));
		free(img);
		return;
	}
	memset(img + info.interp_off, 0, info.interp_size);
	memcpy(img + info.interp_off, ld, strlen(ld));
	e = dw_write_all(dyn, img, len);
	free(img);
	if (e) {
		dw_say(d, ABI_SKIP, name, "cannot write the program copy: %s", dw_err_name(-e));
		return;
	}
	e = spawn_stopped(dyn, &pid);
	if (e) {
		dw_say(d, ABI_SKIP, name, "exec of a copy of %s with PT_INTERP %s: %s", src, ld, dw_err_name(e));
		return;
	}
	if (!dw_pid_maps_file(pid, ld)) {
		dw_kill_child(pid);
		dw_say(d, ABI_SKIP, name, "the copied interpreter is not mapped in the stopped program");
		return;
	}
	e = dw_try_open(ld, O_WRONLY);
	int prog_e = dw_try_open(dyn, O_WRONLY);

	dw_kill_child(pid);
	if (!e && prog_e == ETXTBSY)
		dw_say(d, ABI_PASS, name, "after execve() of a copy of %s the mapped interpreter (copy of %s) opens O_WRONLY; the program itself: ETXTBSY",
		    src, interp);
	else
		dw_say(d, ABI_FAIL, name, "observed open(O_WRONLY) of the mapped interpreter: %s (want success), of the program: %s (want ETXTBSY)",
		    dw_err_name(e), dw_err_name(prog_e));
}

/* ----------------------------------------------------- MAP_DENYWRITE */

static void check_mmap(struct dw *d)
{
	char data[PATH_MAX];
	int fd, wfd, e;
	void *p;

	snprintf(data, sizeof(data), "%s/data", d->dir);
	e = dw_copy_file(d->prog, data, 0755);
	fd = e ? -1 : open(data, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dw_say(d, ABI_SKIP, "mmap-denywrite-ignored", "cannot make a data file");
		dw_say(d, ABI_SKIP, "mmap-denywrite-with-writer", "cannot make a data file");
		return;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_DENYWRITE, fd, 0);
	if (p == MAP_FAILED)
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_DENYWRITE, fd, 0);
	if (p == MAP_FAILED) {
		dw_say(d, ABI_SKIP, "mmap-denywrite-ignored", "mmap(MAP_DENYWRITE): %s", dw_err_name(errno));
	} else {
		e = dw_try_open(data, O_WRONLY);
		munmap(p, 4096);
		if (!e)
			dw_say(d, ABI_PASS, "mmap-denywrite-ignored", "open(O_WRONLY) of a file mapped MAP_PRIVATE|MAP_DENYWRITE succeeds");
		else
			dw_say(d, ABI_FAIL, "mmap-denywrite-ignored", "observed open(O_WRONLY) of a MAP_DENYWRITE mapping: %s, want success", dw_err_name(e));
	}
	wfd = open(data, O_WRONLY | O_CLOEXEC);
	if (wfd < 0) {
		dw_say(d, ABI_SKIP, "mmap-denywrite-with-writer", "cannot open the data file for writing: %s", dw_err_name(errno));
	} else {
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_DENYWRITE, fd, 0);
		e = p == MAP_FAILED ? errno : 0;
		if (p != MAP_FAILED)
			munmap(p, 4096);
		close(wfd);
		if (!e)
			dw_say(d, ABI_PASS, "mmap-denywrite-with-writer", "mmap(MAP_DENYWRITE) of a file open for writing succeeds");
		else
			dw_say(d, ABI_FAIL, "mmap-denywrite-with-writer", "observed mmap(MAP_DENYWRITE) with a writer: %s, want success", dw_err_name(e));
	}
	close(fd);
}

static void cleanup_dir(const char *dir)
{
	static const char *const files[] = { "prog", "lib.so", "ld", "dyn", "data", "prctl-exe-file-b",
					     "prctl-exe-file-c", "prctl-mm-map-b", "prctl-mm-map-c", "uselib.so" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%.256s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int denywrite_check(const struct denywrite_opts *opts, abi_report_fn report, void *arg)
{
	static const struct denywrite_opts none;
	const char *tmp = opts && opts->tmpdir ? opts->tmpdir : secure_getenv("TMPDIR");
	struct dw d = { .report = report, .arg = arg, .opts = opts ? opts : &none };
	int e;

	/* By default a short path: the PT_INTERP rewrite needs one. */
	if (!(opts && opts->tmpdir) && (!tmp || !*tmp || strlen(tmp) > 12))
		tmp = "/tmp";
	if (strlen(tmp) > sizeof(d.dir) - 16)
		return -ENAMETOOLONG;
	snprintf(d.dir, sizeof(d.dir), "%s/uksdw.XXXXXX", tmp);
	if (!mkdtemp(d.dir))
		return -errno;
	snprintf(d.prog, sizeof(d.prog), "%s/prog", d.dir);
	e = dw_copy_file(d.opts->exe ? d.opts->exe : "/proc/self/exe", d.prog, 0755);
	if (e) {
		rmdir(d.dir);
		return e;
	}
	check_running(&d);
	check_exec_writer(&d);
	check_dlopen(&d);
	check_interp(&d);
	check_mmap(&d);
	dw_check_prctl(&d, false);
	dw_check_prctl(&d, true);
	dw_check_uselib(&d);
	cleanup_dir(d.dir);
	return d.fails;
}
