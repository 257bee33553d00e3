# SPDX-License-Identifier: MIT
# memfail's front door: wraps CMake (as DuckDB does). `make demo` and `make test` do all set-up.
# Each build folder is configured once (its generator is fixed then); `make clean` starts over.
.PHONY: all deps deps-sanitizers release debug demo demo-build test build-asan test-asan build-tsan test-tsan bench install package docker clean help

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
BUILD_RELEASE := build/release
BUILD_ASAN := build/asan
BUILD_TSAN := build/tsan
DEMO_DIR := demo
CTEST_FLAGS ?= --output-on-failure -LE 'slow|calibration'
# CI (CI=true) builds the release tree with warnings as errors, so a new warning fails CI. The
# sanitizer builds keep warnings as warnings: -O0 and instrumentation change which ones GCC emits.
WERROR := $(if $(filter true,$(CI)),-DMEMFAIL_WERROR=ON,)

all: release

help:
	@echo "make demo       install deps, build, generate the datasets, diagnose verbatim and oracle"
	@echo "make test       install deps, build, run the test suite with CTest"
	@echo "make test-asan  the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang 14)"
	@echo "make test-tsan  the concurrent subsystems' tests (core, llm, run, serve, adapters) under ThreadSanitizer (clang 14, two shards)"
	@echo "make bench      build the benchmarks (bench/README.md says how to run them)"
	@echo "make install    install memfail, fake-llm, docs and examples under PREFIX (/usr/local)"
	@echo "make package    the Debian package, in build/release/package/"
	@echo "make docker     the container image (Debian 12 + the package; IMAGE=memfail:latest)"
	@echo "(build-asan and build-tsan build without testing; CI=true builds the release tree with -Werror)"

deps:
	@scripts/install-deps

deps-sanitizers:
	@scripts/install-deps --sanitizers

# The sanitizer builds compile with clang 14 (installed by deps-sanitizers): about half GCC's time at
# -O0 with instrumentation. Line tables only (-g1): what a sanitizer's stack trace prints.
SAN_CC ?= clang-14
SAN_CXX ?= clang++-14
SAN_CMAKE := CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -S . $(GEN) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-g1 \
	-DCMAKE_CXX_FLAGS_DEBUG=-g1 -DMEMFAIL_BUILD_BENCH=OFF

$(BUILD_RELEASE)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_RELEASE) $(GEN) -DCMAKE_BUILD_TYPE=Release $(WERROR)

release: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS)

# The demo needs only the memfail program: build that target alone (not the tests and benchmarks).
demo-build: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target memfail_cli

demo: demo-build
	scripts/demo $(BUILD_RELEASE)/bin/memfail $(DEMO_DIR)

# `make install` (PREFIX=/usr/local by default; DESTDIR honoured): memfail, fake-llm, the tokenizer
# rank files, the demo script, docs and examples (cmake/install.cmake).
PREFIX ?= /usr/local
install: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target memfail_cli fake_llm
	DESTDIR=$(DESTDIR) cmake --install $(BUILD_RELEASE) --prefix $(PREFIX)

# The Debian package (CPack): build/release/package/memfail_<version>_<arch>.deb.
package: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target memfail_cli fake_llm
	cd $(BUILD_RELEASE) && cpack -G DEB

# The container image the cluster examples name (Debian 12 with the package): needs docker or podman.
IMAGE ?= memfail:latest
docker: package
	scripts/build-image $(BUILD_RELEASE)/package $(IMAGE)

test: release
	cd $(BUILD_RELEASE) && ctest -j $(JOBS) $(CTEST_FLAGS)

$(BUILD_ASAN)/CMakeCache.txt: | deps-sanitizers
	$(SAN_CMAKE) -B $(BUILD_ASAN) -DMEMFAIL_SANITIZE="address;undefined"

$(BUILD_TSAN)/CMakeCache.txt: | deps-sanitizers
	$(SAN_CMAKE) -B $(BUILD_TSAN) -DMEMFAIL_SANITIZE=thread

build-asan: deps-sanitizers $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -j $(JOBS) $(CTEST_FLAGS)

# ThreadSanitizer covers the subsystems that run threads: the pool (core), the LLM client, cache and
# scripted server (llm), the concurrent runner (run), memfail serve (serve), and the exec adapter's
# stderr reader with the adapter tests (memory: only those, the rest of it is single-threaded).
TSAN_TESTS := test_core test_llm test_run test_serve test_memory
build-tsan: deps-sanitizers $(BUILD_TSAN)/CMakeCache.txt
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target $(TSAN_TESTS)

# test_run leaves out its planted-fault batteries under ThreadSanitizer: they grade many probes
# through the same runner the other run tests drive (release and ASan run them), and take minutes
# under TSan's instrumentation while adding no thread interleaving the others lack.
TSAN_RUN_SKIP := PlantedDistortions.*:PlantedFaults.*:ConditionSlices.*:DynamicRun.EveryPlantedFaultGetsItsLabelOnAGeneratedUser
# Each binary runs as two GoogleTest shards side by side (the machine has two cores; one process
# would leave one idle), each shard's output kept in build/tsan/<test>.<shard>.log and printed.
TSAN_SHARDS ?= 2
test-tsan: build-tsan
	@for t in $(TSAN_TESTS); do \
	  filter=; [ $$t = test_memory ] && filter='--gtest_filter=*Adapter*:*Conformance*'; \
	  [ $$t = test_run ] && filter='--gtest_filter=-$(TSAN_RUN_SKIP)'; \
	  pids=; i=0; \
	  while [ $$i -lt $(TSAN_SHARDS) ]; do \
	    GTEST_TOTAL_SHARDS=$(TSAN_SHARDS) GTEST_SHARD_INDEX=$$i \
	    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	      $(BUILD_TSAN)/tests/$$t --gtest_brief=1 $$filter > $(BUILD_TSAN)/$$t.$$i.log 2>&1 & \
	    pids="$$pids $$!"; i=$$((i + 1)); \
	  done; \
	  ok=1; for p in $$pids; do wait $$p || ok=0; done; \
	  i=0; while [ $$i -lt $(TSAN_SHARDS) ]; do echo "== $$t, shard $$i of $(TSAN_SHARDS)"; cat $(BUILD_TSAN)/$$t.$$i.log; i=$$((i + 1)); done; \
	  [ $$ok = 1 ] || { echo "test-tsan: $$t failed"; exit 1; }; \
	done

bench: release

clean:
	rm -rf build $(DEMO_DIR)
