# Sluice: `make run` starts an edge on 127.0.0.1:8080 with the demo app;
# `make test` runs every check CI runs.

GO       ?= go
BIN      := bin/sluice
# Packages that must also build for the browser.
WASM_PKGS := ./shared/... ./wasm/...
# Where `make wasm` puts sluice.wasm, sluice.wasm.br and wasm_exec.js; the
# edge embeds the last two, which are committed (client-js/dist/README.md).
WASM_DIR := client-js/dist
# The Go release that builds them, pinned so that every machine builds the
# same bytes (`make wasm-check` compares); a go command of another release
# fetches this one through the module proxy (GOTOOLCHAIN).
WASM_GO  := go1.26.8
# What `sluice version` says of a binary made here is the version `go
# install` records for the same commit (internal/version): a release tag
# on a tagged commit, else the commit's pseudo-version, "+dirty" with
# uncommitted changes. internal/version/stamp computes it from git and
# build writes it in with -ldflags, since the go command records nothing
# in a git worktree or with -buildvcs=false. VERSION=v1.2.3 reports that
# release instead (a tree without its tag).
VERSION  ?=
FUZZTIME ?= 2m
BENCHCOUNT ?= 6
# staticcheck, pinned to a release that knows Go 1.26 (2026.2.2); `go
# install` fetches and builds it once into the module and build caches.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# How the static binaries (the image's, the releases') are compiled: no
# cgo, no build machine's paths. vet, staticcheck and the e2e tests'
# binary compile the tree the same way, so that the build cache holds one
# compilation of it without -race, not two: a static build from a cold
# cache took 160 s of CPU here, after vet's compilation, with cgo on, had
# done the same work. The tree has no cgo, so they see the same files.
STATIC_ENV   := CGO_ENABLED=0
STATIC_FLAGS := -trimpath

.PHONY: tidy-check commit-check npm-pack all build run test chaos wasm-test vet staticcheck fmt-check typecheck node bench bench-compare compare-test compare-quick fuzz clean wasm wasm-check chromium iproute2 strace redis image image-context podman caddy release release-check release-binaries release-image release-sums FORCE

all: build

build: wasm
	@stamp=$$($(GO) run ./internal/version/stamp -version='$(VERSION)') && \
	echo "$(GO) build -ldflags='$$stamp' -o $(BIN) ./cmd/sluice" && \
	$(GO) build -ldflags="$$stamp" -o $(BIN) ./cmd/sluice

run: build
	./$(BIN) edge

# testsummary prints go test's usual output and a last line "N passed, N
# failed, N skipped", and exits with go test's status. It is built, not
# `go run`, since go run would turn every failing status into 1. Each of
# TEST_MODULES is tested, in one summary: deploy/ is a module of its own
# (its tests import the Kubernetes and kustomize libraries, which the
# server's module does not need), which `./...` from here does not reach.
# e2e/compare, another, runs in compare-test. Three packages' tests run
# at once (go test's -p defaults to the cores, two here): the longest
# (e2e, edge/server, edge/journal) mostly wait on processes, sockets and
# JetStream, and run side by side within the 15 minutes this way.
TEST_MODULES := deploy .
TEST_PARALLEL ?= 3
test: wasm-check chromium iproute2 strace podman caddy fmt-check tidy-check commit-check vet staticcheck typecheck wasm-test compare-test
	$(GO) build -o bin/testsummary ./internal/testsummary
	./bin/testsummary sh -c 'status=0; for m in $(TEST_MODULES); do \
	  (cd $$m && $(GO) test -json -race -count=1 -p $(TEST_PARALLEL) -timeout 14m ./...) || status=1; done; exit $$status'

# The chaos test (e2e/chaos_test.go, issue 29): many clients on a
# three-edge cluster, kill -9 and SIGSTOP of edges on a schedule drawn from
# a seed, every answer and delivery checked against the model of
# internal/chaos. `make test` runs two short seeds; this draws seeds one
# after another for CHAOS_DURATION, each running CHAOS_RUN, and ends with
# a summary of the operations checked per kind, the faults and the
# violations. SLUICE_CHAOS_SEED=N (or N,M,...) replays seeds; CHAOS_PURGES=0
# leaves purges out; CHAOS_CLIENTS, CHAOS_FAULTS (kill,stop),
# CHAOS_FAULT_GAP, CHAOS_LOG_DIR and CHAOS_PARTITIONS (default: seeds
# alternate between a log of 1 partition and of 4) are read too.
CHAOS_DURATION ?= 10m
CHAOS_RUN      ?= 2m
CHAOS_TIMEOUT  ?= 3h
chaos:
	CHAOS_DURATION=$(CHAOS_DURATION) CHAOS_RUN=$(CHAOS_RUN) $(GO) test -count=1 -v -timeout=$(CHAOS_TIMEOUT) -run='^TestChaos$$' ./e2e/

# The tests of the browser build that need a JavaScript engine (the
# bridge's conversions of values and options, and the client's code that
# asks the browser: WASM_CLIENT_TESTS), compiled to WebAssembly and run
# under Node.js by the go_js_wasm_exec of the same Go release (its
# wasm_exec.js must match the compiler). No -race: js/wasm has no race
# detector. The rest of wasm/ is tested natively by ./... above.
WASM_TEST_PKGS := ./wasm/bridge/
WASM_CLIENT_TESTS := ^(TestTokenExpiry|TestRoleSecretHash|TestHMACMD5|TestShellSortMembers)$$
wasm-test: node
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" $(WASM_TEST_PKGS)
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" -run '$(WASM_CLIENT_TESTS)' ./wasm/client/

# The browser client: sluice.wasm (stripped), brotli- and gzip-compressed,
# and the wasm_exec.js of the same Go release. Files whose content did not
# change keep their date, so the slow brotli pass runs only after a change.
# wasmpack joins the data segments Go's linker splits at every run of
# zeros, which compress worse than the zeros (client-js/internal/
# wasmpack). It ends by printing the sizes against the budget
# (client-js/internal/wasmsize), which TestWasmSizeBudget enforces.
WASM_ENV := GOTOOLCHAIN=$(WASM_GO) GOOS=js GOARCH=wasm
wasm: $(WASM_DIR)/sluice.wasm.br $(WASM_DIR)/sluice.wasm.gz $(WASM_DIR)/wasm_exec.js
	@$(GO) run ./client-js/internal/precompress -report $(WASM_DIR)/sluice.wasm

# Sluice's own packages are built without inlining (-l): in WebAssembly
# every inlined copy carries its resumable-call blocks, and the client's
# code came out 11 KB gzipped smaller, with msgpack decoding no slower
# under Node.js (client-js/dist/README.md). The runtime keeps its
# inlining: without it the same decoding ran 1.5 to 3 times slower.
WASM_GCFLAGS := github.com/sluicehq/sluice/...=-l
$(WASM_DIR)/sluice.wasm: FORCE
	$(WASM_ENV) $(GO) build -trimpath -buildvcs=false -ldflags='-s -w' -gcflags='$(WASM_GCFLAGS)' -o $@.tmp ./wasm/cmd/sluice-wasm
	$(GO) run ./client-js/internal/wasmpack $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(WASM_DIR)/wasm_exec.js: FORCE
	@src="$$(GOTOOLCHAIN=$(WASM_GO) $(GO) env GOROOT)/lib/wasm/wasm_exec.js"; cmp -s "$$src" $@ || cp "$$src" $@

# One run writes both (a pattern rule's targets are made together).
$(WASM_DIR)/%.br $(WASM_DIR)/%.gz: $(WASM_DIR)/%
	$(GO) run ./client-js/internal/precompress $<

# The committed client files must be what `make wasm` builds from this
# tree: built again in a temporary directory and compared.
wasm-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory WASM_DIR="$$tmp" "$$tmp/sluice.wasm.br" "$$tmp/wasm_exec.js" >/dev/null || exit 1; \
	for f in sluice.wasm.br wasm_exec.js; do \
	  if ! cmp -s "$$tmp/$$f" $(WASM_DIR)/$$f; then \
	    echo "$(WASM_DIR)/$$f is not what \`make wasm\` builds from this tree (what every edge serves):"; \
	    echo "  run \`make wasm\` and commit $(WASM_DIR)"; \
	    exit 1; \
	  fi; \
	done; echo "wasm-check: $(WASM_DIR) is what make wasm builds"

# The npm package, versioned as the binary built with it: bin/sluicehq-sluice-V.tgz,
# with V what `bin/sluice version --short` says without its v (as the
# edge's own /sluice.tgz is), so 1.2.3 at a release's tag (or with
# VERSION=v1.2.3), else the commit's pseudo-version. `npm publish
# bin/sluicehq-sluice-V.tgz` publishes it; `npm install` installs it.
# Without the scripts: the package holds what they make.
npm-pack: build node
	@v="$$(./$(BIN) version --short)" && v="$${v#v}" && \
	stage=$$(mktemp -d); trap 'rm -rf "$$stage"' EXIT; mkdir -p "$$stage/dist" "$$stage/lib" bin; \
	cp client-js/package.json client-js/README.md client-js/sluice.js client-js/stream.js client-js/sluice.d.ts client-js/install.mjs LICENSE "$$stage/"; \
	cp client-js/lib/*.js "$$stage/lib/"; \
	cp $(WASM_DIR)/sluice.wasm $(WASM_DIR)/sluice.wasm.br $(WASM_DIR)/sluice.wasm.gz $(WASM_DIR)/sluice.wasm.d.ts $(WASM_DIR)/wasm_exec.js "$$stage/dist/"; \
	cd "$$stage" && npm pkg set version="$$v" && npm pkg delete scripts && \
	npm pack --loglevel=error --pack-destination "$(CURDIR)/bin"

# The browser tests (e2e/browser_*_test.go) drive a real headless Chromium.
# need-apt installs Debian package $(2) when the check $(1) fails, as
# root; otherwise it says what to run, for the tests named by $(3).
define need-apt
	@if $(1); then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "Installing $(2) for $(3)"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(2); \
	else \
	  echo "$(3) need $(2) installed, as root; this is not root:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $(2)"; \
	  exit 1; \
	fi
endef

chromium:
	$(call need-apt,[ -x /usr/bin/chromium ],chromium,the browser tests)

# The partition tests (e2e/partition_test.go) run edges in network
# namespaces: they need ip (iproute2) and root, and fail without them.
iproute2:
	$(call need-apt,command -v ip >/dev/null,iproute2,the partition tests (run as root))

# The sync test (e2e/sync_test.go) traces a durable edge's fsyncs with
# strace, and fails without it.
strace:
	$(call need-apt,command -v strace >/dev/null,strace,the cluster.sync tests)

# The container image (Containerfile) and the three-edge compose file
# (deploy/compose.yaml) are tested with podman (deploy/image_test.go,
# deploy/compose_test.go), run through runc: Debian's podman runs crun,
# which refuses a host whose cgroups are half v1, half v2 (CI's), where
# runc runs. podman-compose starts the compose file, and CNI's dnsname
# plugin lets its containers find each other by service name.
podman:
	$(call need-apt,command -v podman >/dev/null && command -v runc >/dev/null && command -v podman-compose >/dev/null && [ -x /usr/lib/cni/dnsname ],podman runc podman-compose golang-github-containernetworking-plugin-dnsname ca-certificates,the container tests)

# The compose file's load balancer is Caddy. Its test runs Debian's
# (/usr/bin/caddy, 2.6) in an image it assembles of the binary and the
# libraries ldd names, FROM scratch, since a test cannot count on
# reaching an image registry. On a host that systemd runs, the package
# also starts its caddy.service (a page on :80), which the test does not
# use: `systemctl disable --now caddy` stops it.
caddy:
	$(call need-apt,[ -x /usr/bin/caddy ],caddy,the compose test)

# Static binaries, for the image and the releases: no cgo, no build
# machine's paths, stripped, and stamped as `make build` stamps (the
# commit's version, or VERSION's): a recipe sets stamp=$$($(STAMP))
# first, in the same shell.
STAMP        = $(GO) run ./internal/version/stamp -version='$(VERSION)'
STATIC_BUILD = $(STATIC_ENV) $(GO) build $(STATIC_FLAGS) -ldflags="-s -w $$stamp"

# `make image` builds the image IMAGE (default sluice:V, V the version
# its binary says, "+" made "-") for this machine's architecture
# (IMAGE_ARCH=arm64 for another: the Containerfile only copies, so no
# emulator is needed), labelled with that version and commit.
# image-context makes what it copies, for a `docker build -f
# Containerfile .` instead; bin/image/stamp keeps the binary's stamp.
IMAGE      ?=
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
image: podman image-context
	@stamp=$$(cat bin/image/stamp) && \
	version=$$(echo "$$stamp" | sed -n 's/.*main\.stampVersion=\([^ ]*\).*/\1/p') && \
	revision=$$(echo "$$stamp" | sed -n 's/.*main\.stampCommit=\([^ ]*\).*/\1/p') && \
	image='$(IMAGE)' && image=$${image:-sluice:$$(echo "$${version:-dev}" | tr + -)} && \
	echo "podman build --platform linux/$(IMAGE_ARCH) -f Containerfile -t $$image ." && \
	podman build --quiet --layers=false --format docker --platform linux/$(IMAGE_ARCH) \
	  --build-arg VERSION="$${version:-unknown}" --build-arg REVISION="$${revision:-unknown}" \
	  -f Containerfile -t "$$image" .

image-context:
	@mkdir -p bin/image/data
	@[ -f /etc/ssl/certs/ca-certificates.crt ] || { echo "image-context needs /etc/ssl/certs/ca-certificates.crt (Debian's ca-certificates)"; exit 1; }
	@cp /etc/ssl/certs/ca-certificates.crt bin/image/
	@stamp=$$($(STAMP)) && echo "$$stamp" > bin/image/stamp && \
	echo "static build of ./cmd/sluice for linux/$(IMAGE_ARCH): bin/image/sluice-linux-$(IMAGE_ARCH) ($$stamp)" && \
	GOOS=linux GOARCH=$(IMAGE_ARCH) $(STATIC_BUILD) -o bin/image/sluice-linux-$(IMAGE_ARCH) ./cmd/sluice

# `make release VERSION=vX.Y.Z` writes to RELEASE_DIR the binaries of
# RELEASE_PLATFORMS with that version stamped, the npm package of
# client-js, the image for linux/amd64 and linux/arm64 as OCI archives
# (when podman is here; their manifest list is left in podman's storage
# as sluice:VERSION, to push), and SHA256SUMS of them all. CHANGELOG
# must have the version's section first ("## vX.Y.Z - DATE").
CHANGELOG         ?= CHANGELOG.md
RELEASE_DIR       ?= bin/release/$(VERSION)
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
RELEASE_IMAGE_ARCHS ?= amd64 arm64
release: release-check release-binaries npm-pack release-image
	cp bin/sluicehq-sluice-$(VERSION:v%=%).tgz $(RELEASE_DIR)/
	$(MAKE) --no-print-directory release-sums
	@echo "release $(VERSION): $(RELEASE_DIR)"; cat $(RELEASE_DIR)/SHA256SUMS

release-check:
	@echo "$(VERSION)" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
	  { echo "release: VERSION=$(VERSION) is not a release tag vX.Y.Z (make release VERSION=v1.2.3)"; exit 1; }
	@$(STAMP) >/dev/null
	@grep -Eq '^## $(subst .,\.,$(VERSION))( |$$)' $(CHANGELOG) || \
	  { echo "release: $(CHANGELOG) has no section \"## $(VERSION)\": write what changed first"; exit 1; }

release-binaries:
	@mkdir -p $(RELEASE_DIR)
	@stamp=$$($(STAMP)) || exit 1; \
	for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  echo "sluice $(VERSION) for $$os/$$arch"; \
	  GOOS=$$os GOARCH=$$arch $(STATIC_BUILD) -o $(RELEASE_DIR)/sluice-$(VERSION)-$$os-$$arch ./cmd/sluice || exit 1; \
	done

release-image:
	@if ! command -v podman >/dev/null; then echo "release: no podman here, so no image (make podman installs it, as root)"; exit 0; fi; \
	podman manifest exists sluice:$(VERSION) && podman manifest rm sluice:$(VERSION) >/dev/null; \
	podman manifest create sluice:$(VERSION) >/dev/null || exit 1; \
	for a in $(RELEASE_IMAGE_ARCHS); do \
	  $(MAKE) --no-print-directory image IMAGE_ARCH=$$a IMAGE=sluice:$(VERSION)-$$a || exit 1; \
	  podman manifest add sluice:$(VERSION) containers-storage:localhost/sluice:$(VERSION)-$$a >/dev/null || exit 1; \
	  rm -f $(RELEASE_DIR)/sluice-$(VERSION)-image-linux-$$a.tar; \
	  podman save --quiet --format oci-archive -o $(RELEASE_DIR)/sluice-$(VERSION)-image-linux-$$a.tar sluice:$(VERSION)-$$a || exit 1; \
	done; \
	echo "the image's manifest list: podman manifest push --all sluice:$(VERSION) docker://REGISTRY/sluice:$(VERSION)"

release-sums:
	cd $(RELEASE_DIR) && rm -f SHA256SUMS && files=$$(ls) && sha256sum $$files > SHA256SUMS

# client-js's types, as an application compiles against them: tsc
# --strict on an example (client-js/testdata/types), with the TypeScript
# its package-lock.json pins, installed by npm ci.
TYPES_DIR := client-js/testdata/types
typecheck: node
	cd $(TYPES_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(TYPES_DIR) && ./node_modules/.bin/tsc -p . && echo "typecheck: tsc --strict passed on $(TYPES_DIR)/example.ts"

# Node.js and npm: for the type check, the js/wasm tests and the
# package's tests in Node.js (e2e/node_test.go, e2e/browser_bundle_test.go).
node:
	@if command -v npm >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Node.js and npm for the type check and the Node.js tests"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm; \
	else \
	  echo "The type check and the Node.js tests need node and npm, and this is not root:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends nodejs npm"; \
	  exit 1; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# go.mod and go.sum must be what `go mod tidy` makes of the imports: a
# module imported directly is not marked indirect, none is missing.
tidy-check:
	@for m in $(TEST_MODULES); do \
	  (cd $$m && $(GO) mod tidy -diff) || { echo "$$m/go.mod, go.sum are not tidy: run \`go mod tidy\` there and commit them"; exit 1; }; \
	done

# Commit messages since the rule was written (CONTRIBUTING.md): a subject
# of at most 72 characters, then a blank line before any body. Older
# commits are as they are. A clone without that history checks HEAD.
COMMIT_RULE_SINCE := dc84cc7
commit-check:
	@if ! git rev-parse --git-dir >/dev/null 2>&1; then echo "commit-check: not a git checkout; skipped"; exit 0; fi; \
	range="$(COMMIT_RULE_SINCE)..HEAD"; \
	git cat-file -e "$(COMMIT_RULE_SINCE)^{commit}" 2>/dev/null || range="-1 HEAD"; \
	long=$$(git log --format='%h%x09%s' --no-merges $$range | awk -F'\t' 'length($$2) > 72 {print "  " $$1 " (" length($$2) " characters): " $$2}'); \
	flat=$$(for c in $$(git rev-list --no-merges $$range); do \
	  [ -z "$$(git log -1 --format=%B $$c | sed -n 2p)" ] || echo "  $$c: no blank line after the subject"; done); \
	bad=$$(printf '%s\n%s' "$$long" "$$flat" | sed '/^$$/d'); \
	if [ -n "$$bad" ]; then echo "commit-check: these commits break CONTRIBUTING.md's rule:"; echo "$$bad"; exit 1; fi; \
	echo "commit-check: commit subjects are within 72 characters"

vet:
	$(STATIC_ENV) $(GO) vet $(STATIC_FLAGS) ./...
	cd deploy && $(STATIC_ENV) $(GO) vet $(STATIC_FLAGS) ./...
	GOOS=js GOARCH=wasm $(GO) vet $(WASM_PKGS)

# Twice: the js-only files of wasm/ are seen only with GOOS=js. The tool
# is a host binary, built once; the packages it loads are compiled as
# the static build compiles them (STATIC_ENV, STATIC_FLAGS through the
# GOFLAGS its `go list` reads).
staticcheck:
	GOBIN=$(CURDIR)/bin $(GO) install $(STATICCHECK)
	$(STATIC_ENV) GOFLAGS="$$GOFLAGS $(STATIC_FLAGS)" bin/staticcheck ./...
	cd deploy && $(STATIC_ENV) GOFLAGS="$$GOFLAGS $(STATIC_FLAGS)" ../bin/staticcheck ./...
	GOOS=js GOARCH=wasm bin/staticcheck ./wasm/...

# Benchmarks of the hot paths; pipe two runs through benchstat to compare.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCHCOUNT) ./shared/... ./edge/store/...

# Sluice and Centrifugo v6.9.1 side by side on this machine, with the
# issue's targets (e2e/compare, a module of its own). The first run builds
# Centrifugo into the user cache (minutes). COMPARE_FLAGS=--quick for a
# smoke run, COMPARE_FLAGS=--only=cluster for the two-node scenarios
# (Centrifugo on Redis); see `cd e2e/compare && go run . -h`. Each
# scenario's figures, with the command, machine and date, are written to
# docs/benchmarks/compare-<scenario>.md (--no-results: not written).
COMPARE_FLAGS ?=
# The compare tool's own tests: e2e/compare is a module of its own, which
# `go test ./...` at the root does not reach. Its real two-minute run of
# both servers, TestQuickComparison, is `make compare-quick`.
compare-test:
	cd e2e/compare && $(GO) test -race -count=1 -skip '^TestQuickComparison$$' ./...

compare-quick: redis
	cd e2e/compare && $(GO) test -count=1 -run '^TestQuickComparison$$' .

bench-compare: redis
	cd e2e/compare && $(GO) run . $(COMPARE_FLAGS)

# The cluster scenarios run Centrifugo on redis-server from Debian: it is
# installed when this is root; otherwise only those scenarios need it, and
# the compare command says so if they are asked for.
redis:
	@if [ -x /usr/bin/redis-server ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "Installing redis-server for the cluster comparison"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server; \
	else \
	  echo "The cluster scenarios of bench-compare need /usr/bin/redis-server and this is not root:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends redis-server"; \
	fi

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
	rm -f $(WASM_DIR)/sluice.wasm $(WASM_DIR)/*.tmp

FORCE:
