# tests/cli: programs tests/cli/secure_env.sh makes setuid root.  The two
# libraries are linked by absolute path: a setuid program's loader takes
# no LD_PRELOAD or LD_LIBRARY_PATH from its caller.
SECURE_BINS := $(O)/tests/cli/secure_env $(O)/tests/cli/secure_agent \
	       $(O)/tests/cli/secure_malloc
tests: $(SECURE_BINS)

$(O)/tests/cli/secure_agent: $(O)/tests/cli/secure_preload.o $(LIBAGENT)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $< -Wl,--no-as-needed $(abspath $(LIBAGENT))

$(O)/tests/cli/secure_malloc: $(O)/tests/cli/secure_preload.o $(LIBMALLOC)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $< -Wl,--no-as-needed $(abspath $(LIBMALLOC))
