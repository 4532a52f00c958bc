package main

import "github.com/spf13/cobra"

// newPlanCmd is being written (issue 2); see the plan helper's work.
func newPlanCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{Use: "plan", Short: "Show what an upgrade changes", RunE: func(*cobra.Command, []string) error { return errNotImplemented }}
}
