/* SPDX-License-Identifier: MIT */
/*
 * The x86-64 system-call table (generated into syscall_table.c by
 * scripts/gen-syscalls.py): what the kernel's syscall metadata holds for
 * each call that has syscalls:* events.
 */
#ifndef UKS_TRACEE_SYSCALL_TABLE_H
#define UKS_TRACEE_SYSCALL_TABLE_H

/* SYSCALL_DEFINE_MAXARGS */
#define UKS_SYSCALL_MAXARGS	6

/**
 * struct uks_syscall_meta - one system call
 * @nr:		x86-64 number
 * @name:	event name without "sys_" (entry point: "newstat" for stat)
 * @nb_args:	argument count
 * @types:	argument types as the format file prints them
 * @args:	argument names
 */
struct uks_syscall_meta {
	int nr;
	const char *name;
	unsigned int nb_args;
	const char *types[UKS_SYSCALL_MAXARGS];
	const char *args[UKS_SYSCALL_MAXARGS];
};

/* Sorted by @nr. */
extern const struct uks_syscall_meta __uks_tracee_syscall_table[];
extern const unsigned int __uks_tracee_syscall_table_size;

#endif
