# lib/vduse: the file backend uses liburing when pkg-config finds it
# (config.h: UKS_HAVE_LIBURING), so everything linking libuks needs it.
ifeq ($(HAVE_LIBURING),1)
LIBS += $(shell pkg-config --libs liburing)
endif
