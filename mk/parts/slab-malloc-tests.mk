# The slab unit tests again under the malloc policy (lib/slab/policy.h),
# the one libuks-malloc.so runs: the same test objects, linked with a
# constructor that selects it, in tests/unit/slab-malloc/.
SLAB_MALLOC_TESTS := cache debug entry fresh huge_cache kunit page_run sheaf stress thp usage
SLAB_MALLOC_BINS := $(SLAB_MALLOC_TESTS:%=$(O)/tests/unit/slab-malloc/%)
tests: $(SLAB_MALLOC_BINS)

$(O)/tests/unit/slab-malloc/%: $(O)/tests/unit/slab/%.o $(O)/tests/unit/slab_malloc_policy.o $(LIBA)
	@mkdir -p $(@D)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
