# Compiler flags and the build policy of Linux 5.15 (seeds 006 and 007).
#
# cc-option: $(call cc-option,-flag) yields -flag when $(CC) accepts it under
# -Werror (so a compiler that merely warns about an unknown flag says no).
cc-option = $(shell $(CC) -Werror $(1) -x c -c /dev/null -o /dev/null >/dev/null 2>&1 && echo $(1))

# ld-option: $(call ld-option,-z pack-relative-relocs) yields the linker
# option, spelled for $(CC), when linking a shared object with it succeeds
# without a warning (an older ld only warns about an unknown -z option).
ld-option = $(shell $(CC) -shared -Wl,--fatal-warnings $(addprefix -Xlinker ,$(1)) \
		-x c /dev/null -o /dev/null >/dev/null 2>&1 && echo $(addprefix -Xlinker ,$(1)))

# cc-is-gcc: a probe of the compiler's predefined macros, never its name, so a
# gcc called "cc" or a clang called "gcc" is classified by what it is.
cc-is-gcc = $(shell $(CC) -dM -E -x c /dev/null 2>/dev/null | \
	awk '/define __clang__/ {c=1} /define __GNUC__/ {g=1} END {if (g && !c) print "y"}')

COMPILE_TEST ?= 0
# WERROR defaults to COMPILE_TEST, as init/Kconfig does since 5.15.
WERROR ?= $(COMPILE_TEST)

WARN_FLAGS := -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes \
	      -Wwrite-strings -Wvla -Wformat=2 -Wshadow -Wundef \
	      -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN_FLAGS += -Werror
endif
# gcc warns about a local variable named "main"; clang has no such warning.
ifeq ($(call cc-is-gcc),y)
WARN_FLAGS += $(call cc-option,-Wno-main)
endif

OPT_FLAGS ?= -O2 -g
BASE_CFLAGS := -DUKS_VERSION=\"$(VERSION)\" -std=gnu11 -fno-common -fvisibility=hidden -pthread -MMD -MP \
	       -D_GNU_SOURCE -I include -I lib -I tests -I $(O)

ifeq ($(ZERO_CALL_USED_REGS),1)
BASE_CFLAGS += $(call cc-option,-fzero-call-used-regs=used-gpr)
endif

ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=$(SANITIZE)
endif

ALL_CFLAGS = $(BASE_CFLAGS) $(WARN_FLAGS) $(OPT_FLAGS) $(CFLAGS)
ALL_LDFLAGS = -pthread $(SAN_LDFLAGS) $(LDFLAGS)
LIBS =
