// SPDX-License-Identifier: MIT
/*
 * uks cat / write / ls / stat / mount / daemon: the uksfs file commands.
 * They talk to a running uksd over its Unix socket (the same bytes as the
 * FUSE mount), so they work where FUSE does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/fs.h>

#include "cli.h"

/*
 * The socket: -S, $UKS_SOCKET, or the daemon's default in uks_runtime_dir().
 * NULL (after saying why) when that directory is not safe to use.
 */
const char *cli_socket_path(const char *opt)
{
	static char buf[PATH_MAX];
	const char *env = secure_getenv("UKS_SOCKET");
	char dir[PATH_MAX - 16], why[256];
	int ret;

	if (opt)
		return opt;
	if (env && *env)
		return env;
	ret = uks_runtime_dir(dir, sizeof(dir), 0, why, sizeof(why));
	if (ret && ret != -ENOENT) {	/* missing: no uksd there, said later */
		fprintf(stderr, "uks: %s: %s: not using it for the uksd socket (remove it, "
				"or pass -S SOCKET)\n", dir, why);
		return NULL;
	}
	snprintf(buf, sizeof(buf), "%s/uks.sock", dir);
	return buf;
}

/*
 * Map a request's error to a message and an exit status: 3 when the
 * socket cannot be reached, 1 when the daemon answered with an error.
 */
static int fail(const char *cmd, const char *path, const char *sock, int err)
{
	/* connect() needs write access to the socket (and search on its directories) */
	if ((err == -EACCES || err == -EPERM) && access(sock, W_OK)) {
		fprintf(stderr, "uks %s: cannot connect to %s: %s (pass -S SOCKET for a "
				"uksd of yours)\n", cmd, sock, strerror(errno));
		return 3;
	}
	if (err == -ECONNREFUSED || err == -ENOENT) {
		/* -ENOENT is also "no such file": ask the daemon which. */
		if (err == -ENOENT && !access(sock, F_OK)) {
			fprintf(stderr, "uks %s: %s: %s\n", cmd, path, strerror(-err));
			return 1;
		}
		fprintf(stderr, "uks %s: no uksd answers on %s (start one with "
				"'uks daemon --daemon', or pass -S SOCKET)\n", cmd, sock);
		return 3;
	}
	fprintf(stderr, "uks %s: %s: %s\n", cmd, path, strerror(-err));
	return 1;
}

#define CAT_USAGE	"Usage: uks cat [-n] PATH...\n"
#define WRITE_USAGE	"Usage: uks write [-a] [-n] PATH TEXT...\n"
#define LS_USAGE	"Usage: uks ls [-l] [PATH]\n"
#define MOUNT_USAGE	"Usage: uks mount DIR [UKSD-OPTIONS]\n"

static int to_stdout(const void *buf, size_t len, void *arg)
{
	(void)arg;
	return fwrite(buf, 1, len, stdout) != len;
}

int cli_cat(const char *sock_opt, int argc, char **argv)
{
	const char *sock;
	int flags = 0, c, status = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "+nh")) != -1) {
		switch (c) {
		case 'n':
			flags |= O_NONBLOCK;	/* trace_pipe: what is there, then stop */
			break;
		case 'h':
			puts(CAT_USAGE
			     "Print files of the uksfs tree (e.g. sys/kernel/tracing/trace).\n"
			     "  -n   do not wait on an empty trace_pipe");
			return 0;
		default:
			fputs(CAT_USAGE, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs("uks cat: which file?\n" CAT_USAGE, stderr);
		return 2;
	}
	sock = cli_socket_path(sock_opt);
	if (!sock)
		return 3;
	setvbuf(stdout, NULL, _IONBF, 0);	/* trace_pipe lines as they come */
	for (int i = optind; i < argc; i++) {
		int ret = uks_sock_request(sock, UKS_SOCK_READ, argv[i], flags, NULL, 0, to_stdout,
					   NULL);

		if (ret)
			status = fail("cat", argv[i], sock, ret);
		if (status == 3)
			break;
	}
	return status;
}

int cli_write(const char *sock_opt, int argc, char **argv)
{
	const char *sock;
	int flags = O_TRUNC, c, ret;
	bool newline = true;
	size_t len = 0;
	char *text;

	optind = 1;
	while ((c = getopt(argc, argv, "+anh")) != -1) {
		switch (c) {
		case 'a':
			flags = O_APPEND;
			break;
		case 'n':
			newline = false;
			break;
		case 'h':
			puts(WRITE_USAGE
			     "Write TEXT (the words joined by spaces) to a uksfs file in one write,\n"
			     "as 'echo TEXT > PATH' does.\n"
			     "  -a   append, as 'echo TEXT >> PATH' (set_event, dynamic_events)\n"
			     "  -n   no trailing newline");
			return 0;
		default:
			fputs(WRITE_USAGE, stderr);
			return 2;
		}
	}
	if (optind + 2 > argc) {	/* echo with no words still writes a line: not us */
		fprintf(stderr, "uks write: %s\n" WRITE_USAGE,
			optind < argc ? "what text?" : "which file?");
		return 2;
	}
	sock = cli_socket_path(sock_opt);
	if (!sock)
		return 3;
	for (int i = optind + 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = malloc(len + 2);
	if (!text)
		return 1;
	text[0] = '\0';
	for (int i = optind + 1; i < argc; i++) {
		strcat(text, argv[i]);
		if (i + 1 < argc)
			strcat(text, " ");
	}
	if (newline)
		strcat(text, "\n");
	ret = uks_sock_request(sock, UKS_SOCK_WRITE, argv[optind], flags, text, strlen(text),
			       NULL, NULL);
	free(text);
	return ret ? fail("write", argv[optind], sock, ret) : 0;
}

static int print_names(const void *buf, size_t len, void *arg)
{
	const char *p = buf, *end = p + len;
	bool mode = *(bool *)arg;

	/* Lines are "d 0755 name"; whole lines per chunk. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n > 7) {
			if (mode)
				printf("%c%.4s  %.*s%s\n", p[0], p + 2, (int)(n - 7), p + 7,
				       p[0] == 'd' ? "/" : "");
			else
				printf("%.*s%s\n", (int)(n - 7), p + 7, p[0] == 'd' ? "/" : "");
		}
		p += n + 1;
	}
	return 0;
}

int cli_ls(const char *sock_opt, int argc, char **argv)
{
	const char *sock;
	bool mode = false;
	int c, ret;

	optind = 1;
	while ((c = getopt(argc, argv, "+lh")) != -1) {
		switch (c) {
		case 'l':
			mode = true;
			break;
		case 'h':
			puts(LS_USAGE
			     "List a uksfs directory (default: the root); -l shows types and modes.");
			return 0;
		default:
			fputs(LS_USAGE, stderr);
			return 2;
		}
	}
	if (optind + 1 < argc) {
		fputs("uks ls: one directory at a time\n" LS_USAGE, stderr);
		return 2;
	}
	sock = cli_socket_path(sock_opt);
	if (!sock)
		return 3;
	ret = uks_sock_request(sock, UKS_SOCK_LIST, optind < argc ? argv[optind] : "", 0, NULL,
			       0, print_names, &mode);
	return ret ? fail("ls", optind < argc ? argv[optind] : "/", sock, ret) : 0;
}

/* uksd lives next to uks (build tree, or sbin beside bin), else on $PATH. */
static void exec_uksd(char **args)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/uksd", self);
			execv(path, args);
			snprintf(path, sizeof(path), "%s/../sbin/uksd", self);
			execv(path, args);
		}
	}
	execvp("uksd", args);
	fprintf(stderr, "uks: cannot run uksd: %s\n", strerror(errno));
}

static char arg_uksd[] = "uksd", arg_daemon[] = "--daemon", arg_mount[] = "--mount";

int cli_daemon(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));

	if (!args)
		return 1;
	args[0] = arg_uksd;
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	exec_uksd(args);
	free(args);
	return 1;
}

int cli_mount(int argc, char **argv)
{
	char **args;
	int n = 0;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts(MOUNT_USAGE
		     "Start a uksd that mounts uksfs at DIR and detaches (uksd --daemon --mount DIR).\n"
		     "Unmount with 'uks umount DIR'.");
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {	/* a DIR named -x is ./-x */
		fprintf(stderr, "uks mount: %s\n" MOUNT_USAGE,
			argc < 2 ? "which directory?" : "the directory comes first");
		return 2;
	}
	args = calloc((size_t)argc + 4, sizeof(*args));
	if (!args)
		return 1;
	args[n++] = arg_uksd;
	args[n++] = arg_daemon;
	args[n++] = arg_mount;
	args[n++] = argv[1];
	for (int i = 2; i < argc; i++)
		args[n++] = argv[i];
	exec_uksd(args);
	free(args);
	return 1;
}

int cli_umount(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "-h")) {
		puts("Usage: uks umount DIR\n"
		     "Unmount a uksfs mount (fusermount3 -u DIR); its uksd then exits.");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "uks umount: %s\nUsage: uks umount DIR\n",
			argc < 2 ? "which directory?" : argc > 2 ? "one directory at a time" :
			"unknown option");
		return 2;
	}
	execlp("fusermount3", "fusermount3", "-u", argv[1], (char *)NULL);
	fprintf(stderr, "uks umount: cannot run fusermount3: %s\n", strerror(errno));
	return 1;
}
