/* SPDX-License-Identifier: MIT */
/* The uks CLI's subcommands; each returns the process exit status. */
#ifndef UKS_CLI_H
#define UKS_CLI_H

const char *cli_socket_path(const char *opt);
int cli_cat(const char *sock_opt, int argc, char **argv);
int cli_write(const char *sock_opt, int argc, char **argv);
int cli_ls(const char *sock_opt, int argc, char **argv);
int cli_daemon(int argc, char **argv);
int cli_mount(int argc, char **argv);
int cli_umount(int argc, char **argv);
int cli_trace(const char *sock, int argc, char **argv);
int cli_damon(int argc, char **argv);
int cli_vduse_blk(int argc, char **argv);
int cli_abi_check(int argc, char **argv);
int cli_exec32(int argc, char **argv);
int cli_taskset(int argc, char **argv);

#endif
