/* SPDX-License-Identifier: MIT */
/*
 * The kmem:* events of Linux 5.15 (include/trace/events/kmem.h) that uks
 * fires: kmalloc, kmem_cache_alloc, kfree, kmem_cache_free.  Same fields
 * and print formats, except that gfp_flags prints as a number: user space
 * has no GFP flags beyond the few uks accepts, and __print_flags() is a
 * kernel printing helper we do not emulate.
 */
#ifndef UKS_LIB_SLAB_KMEM_EVENTS_H
#define UKS_LIB_SLAB_KMEM_EVENTS_H

#include <stddef.h>

#include <uks/tracepoint.h>

#include "slab/slub.h"	/* the events' reg/unreg hooks */

UKS_TRACE_EVENT_FN(kmem, kmalloc,
	UKS_TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req,
		     size_t bytes_alloc, unsigned int gfp_flags),
	UKS_TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags),
	UKS_TP_FIELDS(
		(field, unsigned long, call_site, call_site),
		(field, const void *, ptr, ptr),
		(field, size_t, bytes_req, bytes_req),
		(field, size_t, bytes_alloc, bytes_alloc),
		(field, unsigned int, gfp_flags, gfp_flags)),
	UKS_TP_PRINTK("call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=0x%x",
		      (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc,
		      REC->gfp_flags),
	__uks_kmem_event_reg, __uks_kmem_event_unreg)

UKS_TRACE_EVENT_FN(kmem, kmem_cache_alloc,
	UKS_TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req,
		     size_t bytes_alloc, unsigned int gfp_flags),
	UKS_TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags),
	UKS_TP_FIELDS(
		(field, unsigned long, call_site, call_site),
		(field, const void *, ptr, ptr),
		(field, size_t, bytes_req, bytes_req),
		(field, size_t, bytes_alloc, bytes_alloc),
		(field, unsigned int, gfp_flags, gfp_flags)),
	UKS_TP_PRINTK("call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=0x%x",
		      (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc,
		      REC->gfp_flags),
	__uks_kmem_event_reg, __uks_kmem_event_unreg)

UKS_TRACE_EVENT_FN(kmem, kfree,
	UKS_TP_PROTO(unsigned long call_site, const void *ptr),
	UKS_TP_ARGS(call_site, ptr),
	UKS_TP_FIELDS(
		(field, unsigned long, call_site, call_site),
		(field, const void *, ptr, ptr)),
	UKS_TP_PRINTK("call_site=%pS ptr=%p", (void *)REC->call_site, REC->ptr),
	__uks_kmem_event_reg, __uks_kmem_event_unreg)

UKS_TRACE_EVENT_FN(kmem, kmem_cache_free,
	UKS_TP_PROTO(unsigned long call_site, const void *ptr, const char *name),
	UKS_TP_ARGS(call_site, ptr, name),
	UKS_TP_FIELDS(
		(field, unsigned long, call_site, call_site),
		(field, const void *, ptr, ptr),
		(string, name, name)),
	UKS_TP_PRINTK("call_site=%pS ptr=%p name=%s", (void *)REC->call_site, REC->ptr,
		      __get_str(name)),
	__uks_kmem_event_reg, __uks_kmem_event_unreg)

#endif
