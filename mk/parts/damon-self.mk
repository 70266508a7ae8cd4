# libuks-damon-agent.so: the in-process DAMON agent (lib/damon/self/agent/agent.c)
# with the library parts it needs (core, slab, trace, and damon but its
# debugfs files, which only uksfs serves) built again hidden, so it exports
# nothing and clashes with no libuks of the program.
# -z now: no lazy binding, whose resolver writes memory the monitor thread
# must never touch while a page is taken away (lib/damon/self/self.c).
AGENT_SRCS := $(CORE_SRCS) $(SLAB_SRCS) $(TRACE_SRCS) \
	      $(filter-out lib/damon/debugfs/%,$(DAMON_SRCS))
AGENT_OBJS := $(AGENT_SRCS:%.c=$(O)/apic/%.o) $(O)/apic/lib/damon/self/agent/agent.o
LIBAGENT := $(O)/libuks-damon-agent.so

$(O)/apic/%.o: %.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(ALL_CFLAGS) -fPIC -DUKS_SHARED -fvisibility=hidden -c $< -o $@

$(LIBAGENT): $(AGENT_OBJS) lib/damon/self/agent/agent.map
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -shared -Wl,-z,now -Wl,-z,defs \
		-Wl,--version-script=lib/damon/self/agent/agent.map \
		-o $@ $(AGENT_OBJS) $(LIBS)

all: $(LIBAGENT)

# The self tests and stress program: bound at load (see above).
SELF_TEST_BINS := $(O)/tests/unit/damon/self $(O)/tests/damon/self_stress
$(SELF_TEST_BINS): private ALL_LDFLAGS += -Wl,-z,now
$(O)/tests/damon/self_stress: $(O)/tests/damon/self_stress.o
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread
$(O)/bench/damon_self_overhead: private ALL_LDFLAGS += -Wl,-z,now
tests: $(O)/tests/damon/self_stress $(LIBAGENT)

# `make install`: the agent goes to $(PREFIX)/lib, where `uks damon record
# --primitive self` looks for it (next to uks, then in ../lib).
.PHONY: install-damon-agent
install: install-damon-agent
install-damon-agent: $(LIBAGENT)
	install -D -m 755 $(LIBAGENT) $(DESTDIR)$(PREFIX)/lib/libuks-damon-agent.so
