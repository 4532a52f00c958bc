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
STATICCHECK_VERSION ?= v0.8.2
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build test lint bench controlplane demo clean

all: build

build:
	$(GO) build -o $(BIN)/upgrade-console ./cmd/upgrade-console

controlplane: $(KUBE_APISERVER) $(ETCD)

# go build -v names each package it compiles: turned into a running count so the
# several-minute first build shows progress instead of silence.
$(KUBE_APISERVER):
	@echo ">> building kube-apiserver from k8s.io/kubernetes (the first build takes several minutes on two cores)"
	@cd hack/controlplane && $(GO) build -v -o $(KUBE_APISERVER) k8s.io/kubernetes/cmd/kube-apiserver 2>&1 \
	  | awk '/^go: downloading/ {d++; if (d % 25 == 1) print "   downloading modules (" d ")…"; next} {n++; if (n % 100 == 0) print "   compiled " n " packages…"; fflush()} /error|cannot|undefined/ {print}' ; \
	  test -x $(KUBE_APISERVER) || { echo "kube-apiserver build failed: run 'cd hack/controlplane && go build k8s.io/kubernetes/cmd/kube-apiserver' to see why"; exit 1; }
	@echo ">> $(KUBE_APISERVER) ready"

$(ETCD):
	@echo ">> building etcd from go.etcd.io/etcd/server/v3"
	@cd hack/controlplane && $(GO) build -o $(ETCD) go.etcd.io/etcd/server/v3
	@echo ">> $(ETCD) ready"

test: controlplane
	$(GO) test ./... -count=1

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: controlplane
	$(GO) test ./... -run '^$$' -bench . -benchmem

demo: controlplane build
	$(BIN)/upgrade-console demo --assets $(BIN)

clean:
	rm -rf $(BIN)
