// SPDX-License-Identifier: MIT
/* lib/core/list.h: list_head and hlist. */
#include "harness.h"
#include "core/list.h"

struct item {
	int v;
	struct list_head node;
	struct hlist_node hnode;
};

static int collect(struct list_head *head, int *out)
{
	struct item *it;
	int n = 0;

	list_for_each_entry(it, head, node)
		out[n++] = it->v;
	return n;
}

TEST(list_add_order)
{
	LIST_HEAD(head);
	struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };
	int got[3];

	ASSERT_TRUE(list_empty(&head));
	list_add_tail(&a.node, &head);
	list_add_tail(&b.node, &head);
	list_add(&c.node, &head);
	ASSERT_EQ(collect(&head, got), 3);
	EXPECT_EQ(got[0], 3);
	EXPECT_EQ(got[1], 1);
	EXPECT_EQ(got[2], 2);
	EXPECT_EQ(list_first_entry(&head, struct item, node)->v, 3);
	EXPECT_EQ(list_last_entry(&head, struct item, node)->v, 2);
}

TEST(list_del_poisons_and_safe_iteration)
{
	LIST_HEAD(head);
	struct item items[5], *it, *tmp;
	int got[5];

	for (int i = 0; i < 5; i++) {
		items[i].v = i;
		list_add_tail(&items[i].node, &head);
	}
	list_for_each_entry_safe(it, tmp, &head, node)
		if (it->v % 2)
			list_del(&it->node);
	ASSERT_EQ(collect(&head, got), 3);
	EXPECT_EQ(got[1], 2);
	EXPECT_TRUE(items[1].node.next == LIST_POISON1);
	EXPECT_TRUE(items[1].node.prev == LIST_POISON2);
	list_del_init(&items[0].node);
	EXPECT_TRUE(list_empty(&items[0].node));
	list_del_init(&items[2].node);
	EXPECT_TRUE(list_is_singular(&head));
}

TEST(list_move_and_splice)
{
	LIST_HEAD(a);
	LIST_HEAD(b);
	struct item x[4];
	int got[4];

	for (int i = 0; i < 4; i++) {
		x[i].v = i;
		list_add_tail(&x[i].node, i < 2 ? &a : &b);
	}
	list_move_tail(&x[0].node, &b);	/* a: 1   b: 2 3 0 */
	list_move(&x[3].node, &a);	/* a: 3 1 b: 2 0 */
	list_splice_init(&b, &a);	/* a: 2 0 3 1 */
	ASSERT_TRUE(list_empty(&b));
	ASSERT_EQ(collect(&a, got), 4);
	EXPECT_EQ(got[0], 2);
	EXPECT_EQ(got[1], 0);
	EXPECT_EQ(got[2], 3);
	EXPECT_EQ(got[3], 1);
	list_splice(&b, &a);		/* empty splice is a no-op */
	EXPECT_EQ(collect(&a, got), 4);
}

TEST(hlist_add_del)
{
	struct hlist_head h = HLIST_HEAD_INIT;
	struct item x[3], *it;
	struct hlist_node *tmp;
	int sum = 0, n = 0;

	ASSERT_TRUE(hlist_empty(&h));
	for (int i = 0; i < 3; i++) {
		x[i].v = 10 << i;
		INIT_HLIST_NODE(&x[i].hnode);
		EXPECT_TRUE(hlist_unhashed(&x[i].hnode));
		hlist_add_head(&x[i].hnode, &h);
	}
	hlist_for_each_entry(it, &h, hnode)
		sum += it->v, n++;
	EXPECT_EQ(n, 3);
	EXPECT_EQ(sum, 70);
	EXPECT_EQ(hlist_entry(h.first, struct item, hnode)->v, 40);
	hlist_del_init(&x[1].hnode);
	EXPECT_TRUE(hlist_unhashed(&x[1].hnode));
	hlist_del_init(&x[1].hnode);	/* twice is harmless */
	hlist_for_each_entry_safe(it, tmp, &h, hnode)
		hlist_del(&it->hnode);
	EXPECT_TRUE(hlist_empty(&h));
}

TEST_HARNESS_MAIN
