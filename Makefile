# Entry points of the README quick start. Each installs what is missing and
# builds first.
BUILD ?= build
JOBS ?= $(shell nproc)
CTMC := $(BUILD)/cli/ctmc-snn

.PHONY: deps configure build test reports bench data clean

deps:
	bash scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release; fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

data: deps
	bash scripts/fetch-data.sh

reports: build
	@if [ -f scripts/fetch-data.sh ]; then bash scripts/fetch-data.sh; fi
	$(CTMC) report all

bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target benchmarks

clean:
	rm -rf $(BUILD)
