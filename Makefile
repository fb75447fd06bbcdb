# Sluice: `make run` starts an edge on 127.0.0.1:8080 with the demo app;
# `make test` runs every check CI runs.

GO       ?= go
BIN      := bin/sluice
# Packages that must also build for the browser.
WASM_PKGS := ./shared/... ./wasm/...
FUZZTIME ?= 2m
BENCHCOUNT ?= 6

.PHONY: all build run test vet fmt-check bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/sluice

run: build
	./$(BIN) edge

test: fmt-check vet
	$(GO) test -race -count=1 -timeout 14m ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet $(WASM_PKGS)

# Benchmarks of the hot paths; pipe two runs through benchstat to compare.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCHCOUNT) ./shared/... ./edge/store/...

# Runs every fuzz target for FUZZTIME, one after another.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list='^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) -parallel=1 $$pkg; \
	  done; \
	done

clean:
	rm -rf bin
