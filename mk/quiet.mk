# Quiet rules: "  CC      lib/core/log.o" unless V=1 shows full commands.
ifeq ($(V),1)
Q_CC :=
Q_LD :=
Q_AR :=
Q_GEN :=
else
Q_CC = @echo "  CC      $@";
Q_LD = @echo "  LD      $@";
Q_AR = @echo "  AR      $@";
Q_GEN = @echo "  GEN     $@";
MAKEFLAGS += --no-print-directory
endif
