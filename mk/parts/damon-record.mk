# uks damon record/report: the heat map pictures need libpng (config.h says
# whether pkg-config found it) and the report's number formats libm.
ifeq ($(HAVE_LIBPNG),1)
$(O)/cli/damon_image.o: private ALL_CFLAGS += $(shell pkg-config --cflags libpng)
$(UKS): private LIBS += $(shell pkg-config --libs libpng)
endif
$(UKS): private LIBS += -lm
# json_compressed records need zlib, in the library (config.h says whether
# pkg-config found it; without it that format is -EOPNOTSUPP).
ifeq ($(HAVE_ZLIB),1)
LIBS += $(shell pkg-config --libs zlib)
endif
