# tests/vm: programs that run inside the QEMU guest booted by tests/vm/run.sh
# (see docs/VM.md).  vduse-probe checks the guest kernel's VDUSE uAPI;
# blkbench is the block benchmark of `make bench` (bench/vduse_vm.sh);
# vhost-drive drives our device through vhost_vdpa (IOTLB updates).
VM_BINS := $(O)/tests/vm/vduse-probe $(O)/tests/vm/blkbench $(O)/tests/vm/vhost-drive
tests: $(VM_BINS)

$(O)/tests/vm/blkbench.o: private ALL_CFLAGS += -DUKS_HAVE_LIBURING=$(HAVE_LIBURING)
ifeq ($(HAVE_LIBURING),1)
$(O)/tests/vm/blkbench.o: private ALL_CFLAGS += $(shell pkg-config --cflags liburing)
$(O)/tests/vm/blkbench: private LIBS += $(shell pkg-config --libs liburing)
endif

# The guest benchmark: our vduse-blk against qemu-storage-daemon's, and
# DAMON's monitor CPU and the slowdown under self against the guest
# kernel's kdamond, one VM run.
.PHONY: vm-bench
bench: vm-bench
vm-bench: all $(VM_BINS) $(O)/bench/damon_overhead $(O)/bench/damon_self_overhead
	@echo "== bench/vduse_vm.sh"
	@O=$(O) bash bench/vduse_vm.sh
