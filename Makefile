# uks — one non-recursive GNU Makefile (Kbuild-like).
#
#   make                 libuks.a, libuks.so, uks, uksd
#   make check           build and run every test (tests/run)
#   make bench | fuzz | demo | install PREFIX=...
#
# Options: V=1 (show commands), O=dir (out-of-tree build), CC=clang,
# COMPILE_TEST=1 / WERROR=1|0, SANITIZE=address,undefined,
# ZERO_CALL_USED_REGS=1.  See docs/BUILD.md.

VERSION := 0.1.0
SONAME_MAJOR := 0

O ?= build
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
AR ?= ar
ifeq ($(origin CC),default)
CC := cc
endif

.DEFAULT_GOAL := all

include mk/quiet.mk
include mk/flags.mk
include mk/config.mk

# ---------------------------------------------------------------- sources
# The core files that serve uksd and the CLI, not the allocator.
CORE_SERVICE_SRCS := lib/core/ptrace_access.c lib/core/mem_avail.c lib/core/runtime_dir.c \
		     lib/core/seq.c lib/core/kfs.c
CORE_SRCS := lib/core/bitmap.c lib/core/bitmap_hex.c lib/core/cpumask.c lib/core/log.c \
	     lib/core/clock.c lib/core/percpu.c lib/core/local_lock.c \
	     lib/core/version.c lib/core/tracepoint.c lib/core/vsprintf.c \
	     $(CORE_SERVICE_SRCS)
# The slab files that serve uksd and the CLI (the sysfs tree), not the allocator.
SLAB_SERVICE_SRCS := lib/slab/sysfs.c
SLAB_SRCS := lib/slab/page_alloc.c lib/slab/page_purge.c lib/slab/huge_map.c lib/slab/huge_cache.c lib/slab/geometry.c lib/slab/cpu_lock.c \
	     lib/slab/alloc.c lib/slab/free.c lib/slab/partial.c lib/slab/sheaf.c lib/slab/object.c \
	     lib/slab/slub.c lib/slab/kmalloc.c lib/slab/debug.c lib/slab/report.c \
	     lib/slab/debug_parse.c lib/slab/kmem_events.c lib/slab/usage.c \
	     lib/slab/malloc_check.c lib/slab/policy.c lib/slab/policy_kernel.c \
	     $(SLAB_SERVICE_SRCS)
# One file per feature; every .c under lib/trace, lib/tracee, lib/fs and lib/damon's
# folders (core, primitives, self, record, debugfs: docs/DAMON.md) is part of the library.
TRACE_SRCS := $(sort $(wildcard lib/trace/*.c))
TRACEE_SRCS := $(sort $(wildcard lib/tracee/*.c))
FS_SRCS := $(sort $(wildcard lib/fs/*.c))
DAMON_SRCS := $(sort $(wildcard lib/damon/*/*.c))
VDUSE_SRCS := $(sort $(wildcard lib/vduse/*.c))
SCHED_SRCS := $(sort $(wildcard lib/sched/*.c))
LIB_SRCS := $(CORE_SRCS) $(SLAB_SRCS) $(TRACE_SRCS) $(TRACEE_SRCS) $(DAMON_SRCS) \
	    $(VDUSE_SRCS) $(SCHED_SRCS) $(FS_SRCS)
# libuks-malloc.so: the allocator alone, under the malloc policy (which
# lib/malloc/preload.c selects), without the kernel policy and its libgcc
# unwinder, the services for uksd and the CLI, and with nothing but the
# malloc API exported.
MALLOC_SRCS := $(filter-out $(CORE_SERVICE_SRCS) $(SLAB_SERVICE_SRCS) lib/slab/policy_kernel.c,\
		$(CORE_SRCS) $(SLAB_SRCS))
MALLOC_OBJS := $(MALLOC_SRCS:%.c=$(O)/mpic/%.o) $(O)/mpic/lib/malloc/preload.o
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(O)/pic/%.o)

LIBA := $(O)/libuks.a
LIBSO := $(O)/libuks.so.$(VERSION)
LIBMALLOC := $(O)/libuks-malloc.so
UKS := $(O)/uks
UKSD := $(O)/uksd

TEST_SRCS := $(wildcard tests/unit/*/*.c)
TEST_BINS := $(TEST_SRCS:%.c=$(O)/%)
# bench/trace-lttng.c is the LTTng-UST provider linked into trace-event.
BENCH_SRCS := $(filter-out bench/trace-lttng.c,$(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:%.c=$(O)/%)
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:%.c=$(O)/%)
FUZZ_SRCS := $(wildcard fuzz/*.c)

all: $(LIBA) $(LIBSO) $(LIBMALLOC) $(UKS) $(UKSD)
.PHONY: deps all check bench bench-compare fuzz ftracetest demo install clean examples tests

# ---------------------------------------------------------------- rules
$(O)/%.o: %.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(O)/pic/%.o: %.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(ALL_CFLAGS) -fPIC -DUKS_SHARED -c $< -o $@

# The preload is in every page table of the programs it runs under, and the
# kernel's fault-around maps all of a small file's pages on first touch: its
# size is RSS.  Sections per function and data item let the link drop what
# the malloc API never reaches (the sysfs text, validation, the tracepoint,
# cpumask and local-lock helpers),
# and packed relative relocations (DT_RELR, glibc 2.36) shrink the table
# ld.so reads at load: 116 -> 92 KiB of the file resident.
$(O)/mpic/%.o: %.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(ALL_CFLAGS) -fPIC -DUKS_SHARED -DUKS_HIDE_EXPORTS -fvisibility=hidden \
		-ffunction-sections -fdata-sections -c $< -o $@

MALLOC_LDFLAGS := -Wl,--gc-sections $(call ld-option,-z pack-relative-relocs)

# No libgcc unwinder in the preload (stacks come from glibc's backtrace(),
# loaded on first use: lib/slab/report.c), and no libgcc_s.so dependency.
$(LIBMALLOC): $(MALLOC_OBJS) lib/malloc/preload.map
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -shared -static-libgcc $(MALLOC_LDFLAGS) \
		-Wl,--version-script=lib/malloc/preload.map \
		-Wl,-z,defs -o $@ $(MALLOC_OBJS) $(LIBS)

$(LIBA): $(LIB_OBJS)
	$(Q_AR)rm -f $@ && $(AR) rcs $@ $^

$(LIBSO): $(LIB_PIC_OBJS) lib/libuks.map
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libuks.so.$(SONAME_MAJOR) \
		-Wl,--version-script=lib/libuks.map -Wl,-z,defs \
		-o $@ $(LIB_PIC_OBJS) $(LIBS)
	@ln -sf libuks.so.$(VERSION) $(O)/libuks.so.$(SONAME_MAJOR)
	@ln -sf libuks.so.$(VERSION) $(O)/libuks.so

# uksfs over FUSE: libfuse3 when pkg-config finds it (config.h says so).
ifeq ($(HAVE_FUSE3),1)
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3)
$(O)/lib/fs/fuse.o $(O)/pic/lib/fs/fuse.o $(O)/lib/fs/fuse_owner.o $(O)/pic/lib/fs/fuse_owner.o \
$(O)/lib/fs/fuse_notify.o $(O)/pic/lib/fs/fuse_notify.o: \
	private ALL_CFLAGS += $(FUSE_CFLAGS)
LIBS += $(shell pkg-config --libs fuse3)
endif

# The uks program: cli/ and the kernel ABI checks of tools/abi-check/ (not
# in libuks: they fork, exec, ptrace and remap their own mm).
CLI_OBJS := $(patsubst %.c,$(O)/%.o,$(sort $(wildcard cli/*.c tools/abi-check/*.c)))
$(O)/cli/abi_check.o: private ALL_CFLAGS += -I tools

$(UKS): $(CLI_OBJS) $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

DAEMON_OBJS := $(patsubst %.c,$(O)/%.o,$(sort $(wildcard daemon/*.c)))

$(UKSD): $(DAEMON_OBJS) $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/tests/%: $(O)/tests/%.o $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/bench/%: $(O)/bench/%.o $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# bench/trace-event measures LTTng-UST side by side when pkg-config finds
# it (only at bench time: nothing else needs it).
HAVE_LTTNG_UST := $(call have-pkg,lttng-ust)
$(O)/bench/trace-event.o: private ALL_CFLAGS += -DUKS_HAVE_LTTNG_UST=$(HAVE_LTTNG_UST)
ifeq ($(HAVE_LTTNG_UST),1)
$(O)/bench/trace-event.o $(O)/bench/trace-lttng.o: private ALL_CFLAGS += \
	-I bench $(shell pkg-config --cflags lttng-ust)
$(O)/bench/trace-event: $(O)/bench/trace-lttng.o
$(O)/bench/trace-event: private LIBS += $(shell pkg-config --libs lttng-ust)
endif

$(O)/examples/%: $(O)/examples/%.o $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

tests: $(TEST_BINS) $(EXAMPLE_BINS) $(O)/tests/harness/sample
examples: $(EXAMPLE_BINS)

# Programs beyond the library, CLI and daemon (uks-masim, the DAMON agent,
# test drivers, ...) each describe their own build in mk/parts/NAME.mk; a
# part adds prerequisites to all/tests/bench and may use every variable above.
include $(sort $(wildcard mk/parts/*.mk))

# ---------------------------------------------------------------- targets
deps:
	-@scripts/deps.sh

check: deps
	@$(MAKE) all tests
	@O=$(O) tests/run

bench: all $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# Two builds against each other (bench/compare.sh, docs/TESTING.md):
# BEFORE=dir, AFTER=dir (default: this build, made first), ROUNDS=n.
# Not part of make check.
COMPARE_BINS := $(O)/bench/trace-event $(O)/bench/slab-fastpath $(O)/bench/malloc-peers
AFTER ?= $(O)
ifneq ($(filter bench-compare,$(MAKECMDGOALS)),)
ifeq ($(BEFORE),)
$(error make bench-compare: BEFORE=dir is required (a build directory to compare $(AFTER) with))
endif
endif
bench-compare: $(if $(filter $(O),$(AFTER)),all $(COMPARE_BINS))
	@bash bench/compare.sh $(if $(ROUNDS),-r $(ROUNDS)) $(BEFORE) $(AFTER)

# The kernel's ftrace selftests (Linux 6.12) against uksfs, as root:
# fetched once into $(O)/ftracetest, then the same run make check does
# (tests/conformance/ftracetest.sh, docs/FTRACETEST.md).
ftracetest: all
	@scripts/get-ftracetest.sh $(O)/ftracetest
	@O=$(O) bash tests/conformance/ftracetest.sh

FUZZ_SECONDS ?= 20
FUZZ_CC ?= clang
# ASan cannot see inside uks's own slabs (the library's kmalloc), so the
# fuzzers run with slub_debug red zones and poisoning, and a slub_debug BUG
# report fails the run like a sanitizer error.
fuzz: $(CONFIG_H)
	@mkdir -p $(O)/fuzz
	@set -e; for f in $(if $(FUZZ_ONLY),$(patsubst %,fuzz/%.c,$(FUZZ_ONLY)),$(FUZZ_SRCS)); do \
		n=$$(basename $$f .c); \
		echo "  FUZZ    $$n ($(FUZZ_SECONDS)s)"; \
		$(FUZZ_CC) -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -I include -I lib -I $(O) \
			$(FUSE_CFLAGS) -o $(O)/fuzz/$$n $$f $(LIB_SRCS) -lpthread $(LIBS); \
		mkdir -p $(O)/fuzz/$$n.corpus; \
		UKS_SLUB_DEBUG=FZPU $(O)/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			$(O)/fuzz/$$n.corpus fuzz/corpus/$$n 2>$(O)/fuzz/$$n.log || \
			{ tail -50 $(O)/fuzz/$$n.log; exit 1; }; \
		if grep -q '^uks: error: BUG ' $(O)/fuzz/$$n.log; then \
			grep -m1 -A40 '^uks: error: BUG ' $(O)/fuzz/$$n.log; exit 1; fi; \
		grep -E 'stat::number_of_executed_units' $(O)/fuzz/$$n.log || true; \
	done

demo: deps
	@$(MAKE) all examples
	@scripts/demo.sh $(O)

install: all
	install -d $(DESTDIR)$(PREFIX)/include/uks $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 644 include/uks/*.h $(DESTDIR)$(PREFIX)/include/uks/
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBMALLOC) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libuks.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libuks.so.$(SONAME_MAJOR)
	ln -sf libuks.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libuks.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' uks.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/uks.pc
	install -m 755 $(UKS) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(UKSD) $(DESTDIR)$(PREFIX)/sbin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/

clean:
	rm -rf $(O)

-include $(shell find $(O) -path $(O)/ftracetest -prune -o -name '*.d' -type f -print 2>/dev/null)
.SECONDARY:
