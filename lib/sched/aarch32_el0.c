// SPDX-License-Identifier: MIT
/*
 * /sys/devices/system/cpu/aarch32_el0: the 32-bit-capable CPUs in the
 * kernel's cpulist format ("2-3\n"), read-only (0444) as in sysfs.  The set
 * is read on every open from the same sources as `uks exec32` (the
 * kernel's own file where it exists, else the list or config file given
 * when the tree is made, else $UKS_A32_CONFIG or /etc/uks/aarch32_el0), so
 * a late change shows on the next open, as the kernel's file does after
 * late onlining.  With no source the file does not exist (-ENOENT), as on
 * kernels without the asymmetric support.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uks/sched.h>
#include <uks/slab.h>

#include "core/kfs.h"
#include "sched/sysfs.h"

#define A32_FILE	"aarch32_el0"
#define A32_TEXT_MAX	8192

struct a32_tree {
	char list[1024];	/* "" for none */
	char config[1024];
};

/* The file's text into @buf; its length, or -ENOENT with no source. */
static int a32_text(const struct a32_tree *t, char *buf, size_t size)
{
	struct uks_cpumask m;
	int ret = uks_a32_capable_read(&m, t->list[0] ? t->list : NULL,
				       t->config[0] ? t->config : NULL, NULL, 0);
	int n;

	if (ret)
		return ret;
	n = uks_cpumask_print_list(&m, buf, size - 1);
	if (n < 0)
		return n;
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

/* The set as of open, as sysfs shows it. */
static int a32_open(struct kfs_open_file *of)
{
	char *text = uks_kmalloc(A32_TEXT_MAX);
	int n;

	if (!text)
		return -ENOMEM;
	n = a32_text(of->ref.obj, text, A32_TEXT_MAX);
	if (n < 0) {
		uks_kfree(text);
		return n;
	}
	of->priv = text;
	return 0;
}

static int a32_show(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, of->priv);
	return 0;
}

static void a32_release(struct kfs_open_file *of)
{
	uks_kfree(of->priv);
}

static const struct kfs_ops a32_ops = {
	.open = a32_open,
	.show = a32_show,
	.release = a32_release,
};

static const struct kfs_node a32_file = KFS_FILE(A32_FILE, 0444, &a32_ops);

static bool a32_present(const struct a32_tree *t)
{
	char buf[A32_TEXT_MAX];

	return a32_text(t, buf, sizeof(buf)) >= 0;
}

static int cpu_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	if (strcmp(name, A32_FILE) || !a32_present(dir->obj))
		return -ENOENT;
	child->node = &a32_file;
	return 0;
}

static int cpu_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct kfs_ref child = *dir;

	if (!a32_present(dir->obj))
		return 0;
	child.node = &a32_file;
	return fill(A32_FILE, &child, arg);
}

static const struct kfs_dir_ops cpu_dir_ops = {
	.lookup = cpu_lookup,
	.iterate = cpu_iterate,
};

static const struct kfs_node cpu_dir = KFS_DIR("", 0755, &cpu_dir_ops, NULL);

static void a32_tree_release(void *obj)
{
	uks_kfree(obj);
}

int __uks_sched_sysfs_root(const char *list, const char *config, struct kfs_root *root)
{
	struct a32_tree *t;

	if ((list && strlen(list) >= sizeof(t->list)) ||
	    (config && strlen(config) >= sizeof(t->config)))
		return -ENAMETOOLONG;
	t = uks_kzalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (list)
		strcpy(t->list, list);
	if (config)
		strcpy(t->config, config);
	*root = (struct kfs_root){
		.node = &cpu_dir, .obj = t, .release = a32_tree_release, .kernfs = true,
	};
	return 0;
}
