# tests/damon/reclaim.sh's process with cold memory
$(O)/tests/damon/cold_child: $(O)/tests/damon/cold_child.o
	$(Q_LD)$(CC) $(ALL_LDFLAGS) -o $@ $^
tests: $(O)/tests/damon/cold_child
