# uks-masim: the masim-like access generator (tools/uks-masim.c) for DAMON
# tests and the demo; configurations in configs/masim/.
UKS_MASIM := $(O)/uks-masim

$(UKS_MASIM): $(O)/tools/uks-masim.o $(LIBA)
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

all: $(UKS_MASIM)
