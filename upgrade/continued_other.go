//go:build !unix

package upgrade

func watchContinued() {}
