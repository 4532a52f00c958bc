//go:build tools

// Package tools pins the main packages this module builds, so that `go mod
// tidy` keeps their modules.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
