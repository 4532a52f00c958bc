//go:build tools

// Package tools pins the main packages this module builds, so that `go mod
// tidy` keeps their modules. kubectl is the floor the end-to-end benchmark
// compares the console with (bench/e2e), built here so the benchmark never
// depends on whatever kubectl a machine has installed.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
