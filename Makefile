# dealloctrace: the quick-start commands are `make demo`, `make test` and `make sanitize`.
SWIFT ?= swift
# Warnings are errors for every Swift and C target.
STRICT := -Xswiftc -warnings-as-errors -Xcc -Werror
OUT := out

.PHONY: setup build demo test plugin-test sanitize lint bench compare clean

setup:
	@scripts/setup

build: setup
	$(SWIFT) build $(STRICT)

# Trace the example program (with holder paths, the leak census, allocation stacks and the
# view model's retain/release history) and print its report.
demo: setup
	$(SWIFT) build $(STRICT)
	@mkdir -p $(OUT) && rm -f $(OUT)/feed-demo.jsonl
	DEALLOCTRACE_LOG=$(OUT)/feed-demo.jsonl DEALLOCTRACE_HOLDERS=1 DEALLOCTRACE_LEAKS=1 \
	  DEALLOCTRACE_ALLOC_STACKS=1 DEALLOCTRACE_HISTORY=FeedDemo.ProfileViewModel \
	  "$$($(SWIFT) build --show-bin-path)/FeedDemo"
	"$$($(SWIFT) build --show-bin-path)/dealloctrace" report $(OUT)/feed-demo.jsonl
	@"$$($(SWIFT) build --show-bin-path)/dealloctrace" report --format html \
	  -o $(OUT)/feed-demo.html $(OUT)/feed-demo.jsonl
	@echo "log: $(OUT)/feed-demo.jsonl  HTML report: $(OUT)/feed-demo.html"

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Benchmarks Tests Examples Fuzz Plugins
	@# A merge conflict's markers, committed by mistake, in any tracked file.
	@! git grep -nE '^(<<<<<<<|>>>>>>>) ' -- . ':!Makefile' || { echo "lint: conflict markers above" >&2; exit 1; }

# The whole test suite: a strict build, the format lint, then every test.
test: setup
	$(SWIFT) build $(STRICT) --build-tests
	$(MAKE) lint
	$(SWIFT) test $(STRICT)

# `swift package dealloctrace` end to end on a fixture package that depends on this one:
# apart from `make test` because the fixture builds this whole package again.
plugin-test: setup
	DEALLOCTRACE_PLUGIN_TEST=1 $(SWIFT) test $(STRICT) --filter PluginEndToEndTests

# The sanitizer groups and the fuzzers (docs/ci.md), apart from `make test` for their time:
# the concurrency tests under ThreadSanitizer, the reader, analysis and gate under
# AddressSanitizer, and a fixed-seed plus a short random-seed fuzz run.
sanitize: setup
	scripts/tsan
	scripts/asan
	scripts/fuzz 60

bench: setup
	$(SWIFT) run -c release dealloctrace-bench

# The same workload natively, traced, under heaptrack and under valgrind (docs/benchmarks.md).
compare:
	scripts/setup --compare
	scripts/compare-tools

clean:
	rm -rf .build $(OUT)
