# Traced programs' stacks for stacktrace triggers: elfutils' libdw unwinds
# them where pkg-config finds it (config.h says so); without it a stack is
# the calling instruction alone.
ifeq ($(HAVE_LIBDW),1)
$(O)/lib/tracee/ustack.o $(O)/pic/lib/tracee/ustack.o $(O)/apic/lib/tracee/ustack.o: \
	private ALL_CFLAGS += $(shell pkg-config --cflags libdw)
LIBS += $(shell pkg-config --libs libdw)
endif
