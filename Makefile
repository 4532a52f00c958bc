# upgrade-console: build, test and run the demo.
#
# On a fresh machine with only Go installed:
#   make demo   runs the console against a local control plane with a simulated upgrade
#   make test   runs every test (unit, fuzz seeds, golden, integration)
#
# The local control plane (kube-apiserver and etcd) is built from Go modules by
# hack/controlplane into bin/ the first time; later runs reuse it.

SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
KUBE_APISERVER := $(BIN)/kube-apiserver
ETCD := $(BIN)/etcd
KUBECTL := $(BIN)/kubectl
STATICCHECK_VERSION ?= v0.8.2
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build test lint bench bench-go bench-e2e controlplane kubectl compat demo clean

all: build

# The console is built as Kubernetes builds kubectl: static (CGO_ENABLED=0), so
# the same binary runs on any Linux and every machine builds the same kind of
# binary. The tag drops kustomize's loader of Go plugins (kustomize comes in
# with cli-runtime's flags): a binary that can load plugins has every symbol
# exported, 19 MB more for the kernel to read when it starts from a cold disk.
# `upgrade-console version` names the commit it was built from: stamped here,
# since the build info's own VCS stamp is missing wherever GOFLAGS holds
# -buildvcs=false (CI images often set it), and a CI log then read "(devel)"
# for every build. Empty outside a git checkout: the build info decides.
# CONSOLE_VERSION, not VERSION: a CI environment often exports a VERSION of
# its own (an image tag, a release number), which ?= took as the commit.
CONSOLE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
CONSOLE_BUILD = CGO_ENABLED=0 $(GO) build -tags kustomize_disable_go_plugin_support $(if $(CONSOLE_VERSION),-ldflags "-X main.version=$(CONSOLE_VERSION)")

build:
	$(CONSOLE_BUILD) -o $(BIN)/upgrade-console ./cmd/upgrade-console

controlplane: $(KUBE_APISERVER) $(ETCD)

# The Kubernetes version the control plane is built at, for the version the API
# server reports (/version, kubectl version): a plain `go build` of
# k8s.io/kubernetes reports v0.0.0-master.
KUBE_VERSION = $(shell cd hack/controlplane && $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_VERSION_PARTS = $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_LDFLAGS = -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
  -X k8s.io/component-base/version.gitMajor=$(word 1,$(KUBE_VERSION_PARTS)) \
  -X k8s.io/component-base/version.gitMinor=$(word 2,$(KUBE_VERSION_PARTS)) \
  -X k8s.io/component-base/version.gitTreeState=clean

# go build -v names each package it compiles (one word per line): turned into a
# running count so the several-minute first build shows progress instead of
# silence; any line with a space (a compiler error, "# pkg") is shown as is.
# They are built static (CGO_ENABLED=0), as Kubernetes and etcd releases are.
# Binaries are built beside the target and moved into place, so tests already
# running from bin/ never see a half-written file. They are rebuilt when
# hack/controlplane/go.mod changes the versions.
$(KUBE_APISERVER): hack/controlplane/go.mod
	@echo ">> building kube-apiserver $(KUBE_VERSION) from k8s.io/kubernetes (the first build takes several minutes on two cores)"
	@mkdir -p $(BIN)
	@set -o pipefail; cd hack/controlplane && CGO_ENABLED=0 $(GO) build -v -ldflags "$(KUBE_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver 2>&1 \
	  | awk '/^go: downloading/ {d++; if (d % 25 == 1) print "   downloading modules (" d ")…"; fflush(); next} / / {print; fflush(); next} {n++; if (n % 100 == 0) {print "   compiled " n " packages…"; fflush()}}' \
	  || { rm -f $@.tmp; echo "kube-apiserver build failed: run 'cd hack/controlplane && go build k8s.io/kubernetes/cmd/kube-apiserver' to see why"; exit 1; }
	@mv -f $@.tmp $@
	@echo ">> $@ ready"

$(ETCD): hack/controlplane/go.mod
	@echo ">> building etcd from go.etcd.io/etcd/server/v3"
	@mkdir -p $(BIN)
	@cd hack/controlplane && CGO_ENABLED=0 $(GO) build -o $@.tmp go.etcd.io/etcd/server/v3 || { rm -f $@.tmp; exit 1; }
	@mv -f $@.tmp $@
	@echo ">> $@ ready"

# kubectl, the floor the end-to-end benchmark compares the console with,
# built from the same k8s.io/kubernetes as the API server so the benchmark
# never depends on a kubectl installed on the machine.
kubectl: $(KUBECTL)

$(KUBECTL): hack/controlplane/go.mod
	@echo ">> building kubectl $(KUBE_VERSION) from k8s.io/kubernetes"
	@mkdir -p $(BIN)
	@cd hack/controlplane && CGO_ENABLED=0 $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $@.tmp k8s.io/kubernetes/cmd/kubectl || { rm -f $@.tmp; exit 1; }
	@mv -f $@.tmp $@
	@echo ">> $@ ready"

# The opt-in check that the real upstream EKS-A and etcdadm CRDs (kept beside
# the repository, never in it) accept every object the project writes.
UPSTREAM_CRDS_DIR ?= $(abspath ../shared/reference/upstream-crds)

compat: controlplane
	@if [ -d "$(UPSTREAM_CRDS_DIR)" ]; then set -o pipefail; \
	  UPSTREAM_CRDS="$(UPSTREAM_CRDS_DIR)" $(GO) test ./config/crd/... ./demo/... -run 'Upstream' -count=1 -v 2>&1 | grep -v '^[IWE][0-9]\{4\} '; \
	else echo "compat: skipped, no upstream CRDs at $(UPSTREAM_CRDS_DIR) (set UPSTREAM_CRDS_DIR)"; fi

# -timeout: the command tests run real demos one after another, ~8 to 9.5
# minutes on two cores, against go test's default of 10 per package; a hung
# test still ends the run, with every goroutine's stack.
test: controlplane
	$(GO) test ./... -count=1 -timeout 30m

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# make bench: the Go benchmarks (render at 100/1,000/10,000 nodes and two
# terminal sizes, each pane, snapshot rebuild, ingest, progress derivation).
# The packages are those that hold benchmarks, so no integration test's
# control plane starts. BENCHTIME bounds each benchmark (a few minutes in all
# on two cores); the output is kept in bench/gobench.txt, where the
# end-to-end run reads it to judge the frame-time targets. The end-to-end
# run is its own target: it takes longer than the rest together.
BENCHTIME ?= 1s
BENCH_PKGS = $(sort $(dir $(shell grep -l '^func Benchmark' $$(git ls-files '*_test.go'))))

bench: bench-go

bench-go:
	@set -o pipefail; $(GO) test $(addprefix ./,$(BENCH_PKGS)) -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 1 | tee bench/gobench.txt

# make bench-e2e: the end-to-end benchmark (bench/e2e, bench/README.md):
# 10,000 nodes, the console and kubectl --watch in terminals, a load driver.
# About 15 minutes on two cores (seeding 30,000 objects, no-viewer windows, then each viewer); writes
# bench/results.json. E2E_FLAGS passes more flags (e.g. a quick one:
# E2E_FLAGS="--nodes 1000 --rate-duration 10s --out /tmp/results.json"). kube-apiserver's
# collector is traced: on two cores it is what bounds the API server's write latency.
# It runs bench-go first: the frame-time targets are judged from this
# commit's benchmarks on this machine, never from a bench/gobench.txt
# committed from another.
E2E_FLAGS ?=
bench-e2e: controlplane build $(KUBECTL) bench-go
	$(GO) run ./bench/e2e --assets $(BIN) --console $(BIN)/upgrade-console --kubectl $(KUBECTL) \
	  --apiserver-gctrace --go-bench bench/gobench.txt $(E2E_FLAGS)

demo: controlplane build
	$(BIN)/upgrade-console demo --assets $(BIN)

clean:
	rm -rf $(BIN)
