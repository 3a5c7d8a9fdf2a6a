# dm-rainssd top-level Makefile.
#
#   make                 build dm-rainssd.ko (and rainssd_kunit.ko when the
#                        kernel has CONFIG_KUNIT) against KDIR
#   make KDIR=<dir>      ... against another kernel build or headers directory
#   make demo            set up, build, boot a VM, run fio on an 8-channel volume
#   make test            set up, build, KUnit + integration tests in VMs
#   make test-full       the same at full sizes, with the cases make test skips
#   make test-kasan      the same on a KASAN build of the test kernel (slow)
#   make test-crash      the power-cut cases with many cut points (hours)
#   make check-style     checkpatch --strict and sparse over the module
#   make kernel          build (or refresh) the 6.12 test kernel in the cache
#   make tools           build the userspace tools

RAINSSD_CACHE ?= $(HOME)/.cache/rainssd
KDIR ?= $(RAINSSD_CACHE)/build-6.12
W ?= 1

SRCS := $(wildcard dm-rainssd/*.c dm-rainssd/*.h kunit/*.c kunit/*.h)

.PHONY: all module tools kernel setup demo test test-full test-kasan test-crash check-style clean

all: module tools

module:
	@if [ "$(KDIR)" = "$(RAINSSD_CACHE)/build-6.12" ] && [ ! -f "$(KDIR)/Module.symvers" ]; then \
		$(MAKE) kernel; fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

tools:
	$(MAKE) -C userspace-tools

setup:
	bash scripts/setup-host.sh

kernel: setup
	bash scripts/build-kernel.sh

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

test-full:
	TEST_FULL=1 bash scripts/test.sh

test-kasan:
	RAINSSD_KVARIANT=kasan STOCK=$${STOCK:-0} bash scripts/test.sh

test-crash:
	bash scripts/test-crash.sh

check-style:
	bash scripts/check-style.sh

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	$(MAKE) -C userspace-tools clean
