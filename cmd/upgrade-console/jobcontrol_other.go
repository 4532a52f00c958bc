//go:build !linux

package main

// suspendUnavailable cannot tell without /proc: Bubble Tea's suspend stands.
func suspendUnavailable() string { return "" }
