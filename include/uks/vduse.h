/* SPDX-License-Identifier: MIT */
/*
 * uks vduse: a virtio-blk device in user space (VDUSE, Linux 5.15+).
 *
 * Three layers, each usable alone:
 *
 *  - the data path (struct uks_vduse_blk): split virtqueues, virtio-blk
 *    requests and the backends (file/block device over io_uring, RAM,
 *    null).  It reaches guest memory and interrupts only through a
 *    struct uks_vduse_transport, so the same code serves the real kernel
 *    and the emulated kernel side of the tests;
 *  - the real transport (struct uks_vduse_dev): /dev/vduse/control,
 *    /dev/vduse/NAME, its control messages, the IOTLB mapping cache, kick
 *    eventfds and VDUSE_VQ_INJECT_IRQ, plus the vdpa netlink attach and the
 *    resize control socket;
 *  - the emulated kernel side (struct uks_vduse_emul): guest memory in a
 *    shared memfd, the rings laid out as virtio_vdpa lays them out, and a
 *    virtio-blk driver that submits chains, kicks and reaps.
 *
 * Every int function returns 0 (or a count) on success and a negative
 * errno on failure.  Nothing here prints; messages go to uks_set_log_fn().
 */
#ifndef UKS_VDUSE_H
#define UKS_VDUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Access a mapping must allow (the VDUSE_ACCESS_* values). */
#define UKS_VDUSE_ACCESS_RO	0x1	/* the device reads (driver -> device) */
#define UKS_VDUSE_ACCESS_WO	0x2	/* the device writes (device -> driver) */
#define UKS_VDUSE_ACCESS_RW	0x3

struct uks_vduse_transport;

/**
 * struct uks_vduse_transport_ops - how the data path reaches the driver
 * @map:	translate @iova for @len bytes with access @perm into a host
 *		pointer; store in *@avail how many bytes from @iova are
 *		contiguous in that mapping (at least 1, possibly less than @len).
 *		Return NULL if @iova is not mapped with @perm.
 * @inject_irq:	signal the used-buffer interrupt of queue @q
 *
 * @map is called on the device thread of the queue; a transport that serves
 * several queue threads must make it thread-safe.
 */
struct uks_vduse_transport_ops {
	void *(*map)(struct uks_vduse_transport *t, uint64_t iova, uint64_t len,
		     unsigned int perm, uint64_t *avail);
	int (*inject_irq)(struct uks_vduse_transport *t, unsigned int q);
};

/** struct uks_vduse_transport - embedded in the transport's own context */
struct uks_vduse_transport {
	const struct uks_vduse_transport_ops *ops;
};

/* ------------------------------------------------------------ backends */

struct uks_vduse_backend;

/**
 * uks_vduse_parse_size() - parse "4096", "64K", "16M", "2G", "1T"
 * @text:	the number, optionally followed by one binary suffix
 * @out:	the size in bytes
 *
 * Return: 0, or -EINVAL for anything else, -ERANGE on overflow.
 */
int uks_vduse_parse_size(const char *text, uint64_t *out);

/**
 * uks_vduse_backend_open() - open a backend from a spec
 * @spec:	"file:PATH" (regular file or block device), "ram:SIZE" or
 *		"null:SIZE"
 * @readonly:	open read-only; writes are failed with IOERR
 * @direct:	file backend: O_DIRECT
 * @nr_queues:	number of queues that will submit (one io_uring each)
 * @out:	the backend
 *
 * Return: 0 or -errno (-EINVAL for a bad spec, open(2)'s errno, ...).
 */
int uks_vduse_backend_open(const char *spec, bool readonly, bool direct, unsigned int nr_queues,
			   struct uks_vduse_backend **out);
/** uks_vduse_backend_size() - current size in bytes */
uint64_t uks_vduse_backend_size(const struct uks_vduse_backend *be);
/** uks_vduse_backend_resize() - grow or shrink to @size bytes (ram, null, regular file) */
int uks_vduse_backend_resize(struct uks_vduse_backend *be, uint64_t size);
/** uks_vduse_backend_close() - close and free */
void uks_vduse_backend_close(struct uks_vduse_backend *be);

/* ------------------------------------------------------------ data path */

/**
 * struct uks_vduse_blk_params - what the device offers
 * @name:	device name (also the GET_ID serial, truncated to 20 bytes)
 * @nr_queues:	1..64
 * @queue_size:	maximum ring size, power of two, 2..32768
 * @block_size:	logical block size, 512 or 4096
 * @readonly:	offer VIRTIO_BLK_F_RO and fail writes
 * @event_idx:	offer VIRTIO_RING_F_EVENT_IDX
 * @indirect:	offer VIRTIO_RING_F_INDIRECT_DESC
 */
struct uks_vduse_blk_params {
	const char *name;
	unsigned int nr_queues;
	unsigned int queue_size;
	unsigned int block_size;
	bool readonly;
	bool event_idx;
	bool indirect;
};

/**
 * struct uks_vduse_vq_addr - where the driver put one split ring
 * @num:	ring size (power of two, at most the queue_size offered)
 * @desc:	IOVA of the descriptor table
 * @avail:	IOVA of the driver area (available ring)
 * @used:	IOVA of the device area (used ring)
 * @avail_idx:	the next available index the device processes
 * @features:	negotiated features (EVENT_IDX and INDIRECT_DESC are honoured)
 */
struct uks_vduse_vq_addr {
	unsigned int num;
	uint64_t desc;
	uint64_t avail;
	uint64_t used;
	uint16_t avail_idx;
	uint64_t features;
};

/**
 * struct uks_vduse_blk_stats - per-device counters (sum over queues)
 * @requests:	chains taken from the available rings
 * @errors:	requests answered IOERR
 * @unsupported: requests answered UNSUPP
 * @malformed:	chains rejected by validation (a subset of @errors, or
 *		returned with no status when no writable byte was found)
 * @irqs:	interrupts injected
 */
struct uks_vduse_blk_stats {
	uint64_t requests;
	uint64_t errors;
	uint64_t unsupported;
	uint64_t malformed;
	uint64_t irqs;
};

struct uks_vduse_blk;

/**
 * uks_vduse_blk_features() - the virtio feature bits the device offers
 * @p:		parameters
 */
uint64_t uks_vduse_blk_features(const struct uks_vduse_blk_params *p);

/**
 * uks_vduse_blk_config() - fill the virtio-blk config space (72 bytes, LE)
 * @p:		parameters
 * @capacity_bytes: backend size
 * @buf:	at least uks_vduse_blk_config_size() bytes
 *
 * Return: the number of bytes written.
 */
size_t uks_vduse_blk_config(const struct uks_vduse_blk_params *p, uint64_t capacity_bytes,
			    void *buf);
/** uks_vduse_blk_config_size() - size of the config space uks offers */
size_t uks_vduse_blk_config_size(void);

/**
 * uks_vduse_blk_create() - a virtio-blk data path over a backend
 * @p:		parameters (copied)
 * @be:		the backend (not owned)
 * @t:		the transport (not owned)
 * @out:	the device
 */
int uks_vduse_blk_create(const struct uks_vduse_blk_params *p, struct uks_vduse_backend *be,
			 struct uks_vduse_transport *t, struct uks_vduse_blk **out);
void uks_vduse_blk_destroy(struct uks_vduse_blk *blk);

/**
 * uks_vduse_blk_queue_start() - the driver made queue @q ready
 * @blk:	device
 * @q:		queue index
 * @addr:	the ring's IOVAs and size
 *
 * The ring areas are translated through the transport; a ring that is not
 * fully mapped gives -EFAULT and the queue stays stopped.
 */
int uks_vduse_blk_queue_start(struct uks_vduse_blk *blk, unsigned int q,
			      const struct uks_vduse_vq_addr *addr);
/** uks_vduse_blk_queue_stop() - reset queue @q (no more ring accesses) */
void uks_vduse_blk_queue_stop(struct uks_vduse_blk *blk, unsigned int q);
/**
 * uks_vduse_blk_queue_has_work() - has the driver made chains available?
 * @blk:	device
 * @q:		queue index
 *
 * One acquire load of avail->idx: for polling between kicks.  Call it from
 * the thread that serves @q (or with that thread quiesced).
 */
bool uks_vduse_blk_queue_has_work(const struct uks_vduse_blk *blk, unsigned int q);
/** uks_vduse_blk_queue_avail_idx() - the next available index (GET_VQ_STATE) */
uint16_t uks_vduse_blk_queue_avail_idx(const struct uks_vduse_blk *blk, unsigned int q);

/**
 * uks_vduse_blk_queue_process() - serve queue @q until its ring is empty
 * @blk:	device
 * @q:		queue index
 *
 * Takes every available chain, runs the requests (a batch at a time; file
 * I/O in flight together), fills the used ring and injects the interrupt
 * unless the driver suppressed it.  Call it after each kick.  One thread
 * per queue at most; different queues may be served concurrently.
 *
 * Return: the number of requests completed, or -errno (-ENODEV: queue not
 * started; -EIO: the ring itself is broken, e.g. avail.idx jumped by more
 * than the ring size; the queue is then stopped until the next start).
 */
int uks_vduse_blk_queue_process(struct uks_vduse_blk *blk, unsigned int q);

/**
 * uks_vduse_blk_resize() - the backend changed size: new capacity in the config
 * @blk:	device
 * @size:	new size in bytes; requests are checked against it at once
 */
void uks_vduse_blk_set_capacity(struct uks_vduse_blk *blk, uint64_t size);
uint64_t uks_vduse_blk_capacity(const struct uks_vduse_blk *blk);
void uks_vduse_blk_get_stats(const struct uks_vduse_blk *blk, struct uks_vduse_blk_stats *st);

/* ------------------------------------------------------ real transport */

struct uks_vduse_dev;

/* The device already exists (its daemon died): take it over. */
#define UKS_VDUSE_DEV_RECONNECT	0x1

/**
 * uks_vduse_dev_create() - a virtio-blk device served through /dev/vduse
 * @p:		parameters; @p->name names the VDUSE device and the vdpa device
 * @be:		the backend (not owned; must outlive the device)
 * @flags:	UKS_VDUSE_DEV_RECONNECT
 * @out:	the device
 *
 * Negotiates API version 0 on /dev/vduse/control, creates the device
 * (VDUSE_CREATE_DEV with uks_vduse_blk_features() and the virtio-blk config
 * space, vq_align 4096), opens /dev/vduse/NAME, sets up every queue
 * (VDUSE_VQ_SETUP) and starts the control-message thread, which must run
 * before the device is attached: the kernel waits for its SET_STATUS
 * answers.  From DRIVER_OK on, one thread per queue serves the rings.
 *
 * With UKS_VDUSE_DEV_RECONNECT, an existing device of that name is opened
 * instead and, if the driver had it running, its queues resume at the used
 * index the previous daemon published (requests it took but never completed
 * are served again).
 *
 * Return: 0; -ENOENT if /dev/vduse/control is missing (vduse not loaded);
 * -EEXIST if the name exists and RECONNECT was not asked; -EBUSY if another
 * process holds /dev/vduse/NAME; the kernel's -EINVAL for a configuration it
 * refuses; other -errno from open(2), ioctl(2) or thread creation.
 */
int uks_vduse_dev_create(const struct uks_vduse_blk_params *p, struct uks_vduse_backend *be,
			 unsigned int flags, struct uks_vduse_dev **out);

/**
 * uks_vduse_dev_destroy() - stop serving, close and destroy the device
 * @dev:	device (freed in every case)
 *
 * Stops the queue and message threads, unmaps the IOTLB, closes the node
 * and issues VDUSE_DESTROY_DEV.  Detach the device from the vdpa bus first
 * (uks_vduse_vdpa_detach()): the kernel refuses to destroy an attached one.
 * Return: 0, or -EBUSY if it is still attached (it then stays, unserved, for
 * a later reconnect or destroy), or another -errno of VDUSE_DESTROY_DEV.
 */
int uks_vduse_dev_destroy(struct uks_vduse_dev *dev);

/**
 * uks_vduse_dev_set_poll() - keep polling a queue for a while after serving it
 * @dev:	device
 * @us:		microseconds a queue thread keeps looking at its ring after the
 *		last request before it sleeps on the kick eventfd (0, the
 *		default: sleep at once)
 *
 * Polling catches the next requests without a kick and a wake-up, at the
 * price of that much CPU after each burst.
 */
void uks_vduse_dev_set_poll(struct uks_vduse_dev *dev, unsigned int us);

/** uks_vduse_dev_reconnected() - true if create took over an existing device */
bool uks_vduse_dev_reconnected(const struct uks_vduse_dev *dev);
/** uks_vduse_dev_status() - the virtio status byte last set by the driver */
uint8_t uks_vduse_dev_status(struct uks_vduse_dev *dev);
/** uks_vduse_dev_get_stats() - request counters of the data path */
void uks_vduse_dev_get_stats(const struct uks_vduse_dev *dev, struct uks_vduse_blk_stats *st);

/**
 * uks_vduse_dev_resize() - change the capacity the driver sees
 * @dev:	device
 * @size:	new size in bytes (a multiple of the block size)
 *
 * Resizes the backend, updates the config space (VDUSE_DEV_SET_CONFIG) and,
 * if the driver is running, raises the config interrupt so it rereads it.
 * Return: 0, -EINVAL for a size that is not a multiple of the block size,
 * -EOPNOTSUPP if the backend cannot be resized (a block device), -errno.
 */
int uks_vduse_dev_resize(struct uks_vduse_dev *dev, uint64_t size);

/**
 * uks_vduse_set_msg_timeout() - how long the kernel waits for our answers
 * @name:	device name
 * @seconds:	0 waits forever; the kernel's default is 30
 *
 * Writes /sys/class/vduse/NAME/msg_timeout.  After a timeout the kernel
 * marks the device broken, so keep it long while serving; short timeouts
 * make a detach after a daemon crash fast.  Return: 0 or -errno.
 */
int uks_vduse_set_msg_timeout(const char *name, unsigned int seconds);

/**
 * uks_vduse_vdpa_attach() - add the vdpa device NAME on the vduse bus
 * @name:	the VDUSE device name
 *
 * Generic netlink "vdpa" family, VDPA_CMD_DEV_NEW with management device
 * "vduse".  A driver bound to the vdpa bus (virtio_vdpa: a /dev/vdX disk)
 * then takes it.  Needs CAP_NET_ADMIN in the initial network namespace.
 * Return: 0, -EPERM, -ENOENT (no vdpa family: the module is not loaded),
 * -EEXIST (attached already), or the kernel's -errno (-EINVAL if a queue was
 * not set up).
 */
int uks_vduse_vdpa_attach(const char *name);

/**
 * uks_vduse_vdpa_detach() - VDPA_CMD_DEV_DEL: the driver lets go of the device
 * @name:	the vdpa device name
 *
 * Return: 0, -ENODEV if it is not attached, -EPERM, -ENOENT, -errno.
 */
int uks_vduse_vdpa_detach(const char *name);

/* ------------------------------------------------------ emulated kernel */

struct uks_vduse_emul;

/**
 * struct uks_vduse_emul_seg - one buffer of a chain the emulated driver builds
 * @iova:	buffer address
 * @len:	length
 * @write:	device-writable
 */
struct uks_vduse_emul_seg {
	uint64_t iova;
	uint32_t len;
	bool write;
};

/**
 * uks_vduse_emul_create() - guest memory and rings for @nr_queues queues
 * @mem_size:	bytes of guest memory (a MAP_SHARED memfd: survives fork())
 * @nr_queues:	queues
 * @num:	ring size (power of two)
 * @features:	negotiated features (EVENT_IDX, INDIRECT_DESC)
 * @out:	the emulation
 *
 * Guest memory starts at IOVA UKS_VDUSE_EMUL_IOVA_BASE; everything else is
 * unmapped, so out-of-range addresses fail as they do with a real IOTLB.
 */
int uks_vduse_emul_create(size_t mem_size, unsigned int nr_queues, unsigned int num,
			  uint64_t features, struct uks_vduse_emul **out);
void uks_vduse_emul_destroy(struct uks_vduse_emul *e);
#define UKS_VDUSE_EMUL_IOVA_BASE 0x100000ULL

struct uks_vduse_transport *uks_vduse_emul_transport(struct uks_vduse_emul *e);
/** uks_vduse_emul_vq_addr() - the ring addresses of queue @q (for queue_start) */
void uks_vduse_emul_vq_addr(struct uks_vduse_emul *e, unsigned int q, struct uks_vduse_vq_addr *a);
/** uks_vduse_emul_alloc() - driver memory: an IOVA of @len bytes, @align-aligned; 0 if full */
uint64_t uks_vduse_emul_alloc(struct uks_vduse_emul *e, size_t len, size_t align);
/** uks_vduse_emul_ptr() - the driver's view of @iova (NULL outside guest memory) */
void *uks_vduse_emul_ptr(struct uks_vduse_emul *e, uint64_t iova);
/**
 * uks_vduse_emul_get_desc() - take @n free descriptors of queue @q for a hand-built chain
 * @e:		emulation
 * @q:		queue
 * @n:		how many
 * @idx:	their indices; idx[0] is the head to publish
 *
 * The caller fills them (uks_vduse_emul_desc()) in any shape, valid or not,
 * then calls uks_vduse_emul_publish(); reaping returns them.
 * Return: 0 or -ENOSPC.
 */
int uks_vduse_emul_get_desc(struct uks_vduse_emul *e, unsigned int q, unsigned int n,
			    uint16_t *idx);
/** uks_vduse_emul_desc() - queue @q's descriptor table (struct vring_desc[num]) */
void *uks_vduse_emul_desc(struct uks_vduse_emul *e, unsigned int q);
/** uks_vduse_emul_table() - IOVA of the indirect table slot of head @head (64 entries) */
uint64_t uks_vduse_emul_table(struct uks_vduse_emul *e, unsigned int q, uint16_t head);
#define UKS_VDUSE_EMUL_TABLE_MAX 64

/**
 * uks_vduse_emul_add() - put a chain on queue @q's available ring
 * @e:		emulation
 * @q:		queue
 * @segs:	buffers, device-readable ones first
 * @n:		number of buffers
 * @indirect:	put them in an indirect table (one ring descriptor)
 *
 * Return: the head descriptor index, or -ENOSPC if no descriptors are free.
 */
int uks_vduse_emul_add(struct uks_vduse_emul *e, unsigned int q,
		       const struct uks_vduse_emul_seg *segs, unsigned int n, bool indirect);
/** uks_vduse_emul_publish() - make head @head available (hand-built chains) */
void uks_vduse_emul_publish(struct uks_vduse_emul *e, unsigned int q, uint16_t head);
/**
 * uks_vduse_emul_kick() - notify the device unless it suppressed kicks
 * Return: 1 if the kick eventfd was written, 0 if suppressed.
 */
int uks_vduse_emul_kick(struct uks_vduse_emul *e, unsigned int q);
/** uks_vduse_emul_kick_fd() - the eventfd the device waits on for queue @q */
int uks_vduse_emul_kick_fd(struct uks_vduse_emul *e, unsigned int q);
/** uks_vduse_emul_irq_fd() - the eventfd inject_irq writes for queue @q */
int uks_vduse_emul_irq_fd(struct uks_vduse_emul *e, unsigned int q);
/** uks_vduse_emul_irqs() - interrupts injected on queue @q so far */
uint64_t uks_vduse_emul_irqs(struct uks_vduse_emul *e, unsigned int q);
/**
 * uks_vduse_emul_reap() - take one used element of queue @q
 * @e:		emulation
 * @q:		queue
 * @id:		head of the completed chain
 * @len:	bytes the device wrote
 *
 * Frees the chain's descriptors and sets used_event (EVENT_IDX) to the next
 * index.  Return: 1 if one was taken, 0 if the used ring is empty, -EIO if
 * the device returned an id that is not outstanding.
 */
int uks_vduse_emul_reap(struct uks_vduse_emul *e, unsigned int q, uint16_t *id, uint32_t *len);
/** uks_vduse_emul_set_used_event() - ask for an interrupt only after used index @idx */
void uks_vduse_emul_set_used_event(struct uks_vduse_emul *e, unsigned int q, uint16_t idx);
/** uks_vduse_emul_set_no_interrupt() - VRING_AVAIL_F_NO_INTERRUPT on/off */
void uks_vduse_emul_set_no_interrupt(struct uks_vduse_emul *e, unsigned int q, bool on);

#ifdef __cplusplus
}
#endif

#endif
