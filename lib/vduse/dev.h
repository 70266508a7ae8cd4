/* SPDX-License-Identifier: MIT */
/* The real /dev/vduse transport: internals shared by dev.c, dev_msg.c and iotlb.c. */
#ifndef UKS_LIB_VDUSE_DEV_H
#define UKS_LIB_VDUSE_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vduse/vduse_int.h"

struct vduse_iotlb_map {
	uint64_t start, last;	/* IOVA range, inclusive */
	unsigned int perm;	/* VDUSE_ACCESS_* */
	void *addr;		/* host view of start */
	uint64_t len;
};

struct vduse_iotlb {
	int dev_fd;
	pthread_rwlock_t lock;
	struct vduse_iotlb_map *maps;
	unsigned int nr, cap;
	uint64_t faults, invalidations;
};

void __uks_vduse_iotlb_init(struct vduse_iotlb *tlb, int dev_fd);
void *__uks_vduse_iotlb_map(struct vduse_iotlb *tlb, uint64_t iova, uint64_t len, unsigned int perm,
			    uint64_t *avail);
void __uks_vduse_iotlb_invalidate(struct vduse_iotlb *tlb, uint64_t start, uint64_t last);
void __uks_vduse_iotlb_fini(struct vduse_iotlb *tlb);

/* One virtqueue's thread: waits on the kick eventfd, serves the ring. */
struct vduse_dev_queue {
	struct uks_vduse_dev *dev;
	unsigned int index;
	pthread_mutex_t lock;		/* held while serving; dev_msg.c quiesces with it */
	pthread_t thread;
	bool running;
	int kick_fd;			/* eventfd given to VDUSE_VQ_SETUP_KICKFD */
	int stop_fd;			/* eventfd: the thread exits when readable */
	struct uks_vduse_vq_addr addr;	/* as started (re-mapped after UPDATE_IOTLB) */
};

struct uks_vduse_dev {
	struct uks_vduse_transport t;
	char name[256];
	int ctl_fd;			/* /dev/vduse/control */
	int dev_fd;			/* /dev/vduse/NAME */
	struct uks_vduse_blk_params p;
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	struct vduse_iotlb tlb;
	pthread_t msg_thread;
	bool msg_running;
	int msg_stop_fd;
	pthread_mutex_t state_lock;	/* status, features, queues' running flags */
	uint8_t status;			/* the virtio status byte last accepted */
	uint64_t features;		/* driver features at DRIVER_OK */
	bool reconnected;
	_Atomic unsigned int poll_us;	/* queue threads poll this long before sleeping */
	_Atomic uint64_t nr_msgs;
	struct vduse_dev_queue q[];
};

/* dev_msg.c: the control-message thread and the data path start/stop. */
void *__uks_vduse_dev_msg_thread(void *arg);
int __uks_vduse_dev_start_queues(struct uks_vduse_dev *dev, bool resume);
void __uks_vduse_dev_stop_queues(struct uks_vduse_dev *dev);

#endif
