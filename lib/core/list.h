/* SPDX-License-Identifier: MIT */
/*
 * Intrusive doubly linked lists (list_head) and hash-bucket lists (hlist),
 * with the kernel's names and semantics: a deleted entry is poisoned so a
 * second list_del() faults instead of corrupting a list silently.
 */
#ifndef UKS_LIB_CORE_LIST_H
#define UKS_LIB_CORE_LIST_H

#include <stdbool.h>
#include "core/compiler.h"

#define LIST_POISON1 ((void *)0x100)
#define LIST_POISON2 ((void *)0x122)

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert @n after @head (stack order). */
static inline void list_add(struct list_head *n, struct list_head *head)
{
	__list_add(n, head, head->next);
}

/* Insert @n before @head (queue order). */
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	__list_add(n, head->prev, head);
}

static inline void __list_del_entry(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
}

static inline void list_del(struct list_head *e)
{
	__list_del_entry(e);
	e->next = LIST_POISON1;
	e->prev = LIST_POISON2;
}

static inline void list_del_init(struct list_head *e)
{
	__list_del_entry(e);
	INIT_LIST_HEAD(e);
}

static inline void list_move(struct list_head *e, struct list_head *head)
{
	__list_del_entry(e);
	list_add(e, head);
}

static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	__list_del_entry(e);
	list_add_tail(e, head);
}

static inline bool list_empty(const struct list_head *h)
{
	return READ_ONCE(h->next) == h;
}

static inline bool list_is_singular(const struct list_head *h)
{
	return !list_empty(h) && h->next == h->prev;
}

/* Move every entry of @list to the front of @head; @list is left undefined. */
static inline void list_splice(struct list_head *list, struct list_head *head)
{
	if (list_empty(list))
		return;
	struct list_head *first = list->next, *last = list->prev;

	first->prev = head;
	last->next = head->next;
	head->next->prev = last;
	head->next = first;
}

static inline void list_splice_init(struct list_head *list, struct list_head *head)
{
	list_splice(list, head);
	INIT_LIST_HEAD(list);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

/*
 * The entry iterators walk list_head pointers and convert only real
 * entries: the kernel's versions also form an "entry" from the head
 * itself and touch its member, which sanitizers rightly flag.
 */
#define __list_it(n)	__uks_list_it_##n
#define __list_nx(n)	__uks_list_nx_##n

#define list_for_each_entry(pos, head, member) \
	__list_for_each_entry(pos, head, member, __COUNTER__)
#define __list_for_each_entry(pos, head, member, n) \
	___list_for_each_entry(pos, head, member, n)
#define ___list_for_each_entry(pos, head, member, n)				\
	for (struct list_head *__list_it(n) = (head)->next;			\
	     __list_it(n) != (head) &&						\
	     ((pos) = list_entry(__list_it(n), __typeof__(*(pos)), member), 1);	\
	     __list_it(n) = __list_it(n)->next)

#define list_for_each_entry_reverse(pos, head, member) \
	__list_for_each_entry_reverse(pos, head, member, __COUNTER__)
#define __list_for_each_entry_reverse(pos, head, member, n) \
	___list_for_each_entry_reverse(pos, head, member, n)
#define ___list_for_each_entry_reverse(pos, head, member, n)			\
	for (struct list_head *__list_it(n) = (head)->prev;			\
	     __list_it(n) != (head) &&						\
	     ((pos) = list_entry(__list_it(n), __typeof__(*(pos)), member), 1);	\
	     __list_it(n) = __list_it(n)->prev)

/* Safe against removal of pos; @tmp gets the next entry. */
#define list_for_each_entry_safe(pos, tmp, head, member) \
	__list_for_each_entry_safe(pos, tmp, head, member, __COUNTER__)
#define __list_for_each_entry_safe(pos, tmp, head, member, n) \
	___list_for_each_entry_safe(pos, tmp, head, member, n)
#define ___list_for_each_entry_safe(pos, tmp, head, member, n)			\
	for (struct list_head *__list_it(n) = (head)->next,			\
	     *__list_nx(n) = __list_it(n)->next;				\
	     __list_it(n) != (head) &&						\
	     ((pos) = list_entry(__list_it(n), __typeof__(*(pos)), member),	\
	      (tmp) = list_entry(__list_nx(n), __typeof__(*(pos)), member),	\
	      (void)(tmp), 1);	\
	     __list_it(n) = __list_nx(n), __list_nx(n) = __list_it(n)->next)

/* hlist: a one-pointer head for hash tables. */
struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

#define HLIST_HEAD_INIT { .first = NULL }

static inline void INIT_HLIST_NODE(struct hlist_node *n)
{
	n->next = NULL;
	n->pprev = NULL;
}

static inline bool hlist_unhashed(const struct hlist_node *n)
{
	return !n->pprev;
}

static inline bool hlist_empty(const struct hlist_head *h)
{
	return !READ_ONCE(h->first);
}

static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	if (first)
		first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}

static inline void __hlist_del(struct hlist_node *n)
{
	struct hlist_node *next = n->next, **pprev = n->pprev;

	*pprev = next;
	if (next)
		next->pprev = pprev;
}

static inline void hlist_del(struct hlist_node *n)
{
	__hlist_del(n);
	n->next = LIST_POISON1;
	n->pprev = LIST_POISON2;
}

static inline void hlist_del_init(struct hlist_node *n)
{
	if (hlist_unhashed(n))
		return;
	__hlist_del(n);
	INIT_HLIST_NODE(n);
}

#define hlist_entry(ptr, type, member) container_of(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) ____p = (ptr); ____p ? hlist_entry(____p, type, member) : NULL; })

#define hlist_for_each_entry(pos, head, member)				\
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member); \
	     pos;							\
	     pos = hlist_entry_safe(pos->member.next, __typeof__(*pos), member))

#define hlist_for_each_entry_safe(pos, n, head, member)			\
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member); \
	     pos && ({ n = pos->member.next; 1; });			\
	     pos = hlist_entry_safe(n, __typeof__(*pos), member))

#endif
