// Package report turns a stream of cluster snapshots into what a headless
// operator needs: one timestamped line per meaningful change (for CI logs) and
// the outcome of the upgrade (done, failed, timed out) for the exit code.
//
// It is the dashboard's twin: both read the same model.ClusterState and
// model.Progress, so the plain output and the screen never disagree. The
// rule that ends a wait, model.Judge, is the model's: apply --wait judges by
// it too.
package report

import "github.com/upgrade-console/upgrade-console/model"

// The outcome and its judge, under the names the watch's callers use.
type (
	Outcome      = model.Outcome
	Judge        = model.Judge
	JudgeOptions = model.JudgeOptions
)

const (
	Running  = model.OutcomeRunning
	Done     = model.OutcomeDone
	Failed   = model.OutcomeFailed
	TimedOut = model.OutcomeTimedOut
)

// NewJudge uses EKS-A's completion rule with the default gate and grace.
func NewJudge() Judge { return model.NewJudge() }

// NewJudgeWith is NewJudge with options.
func NewJudgeWith(o JudgeOptions) Judge { return model.NewJudgeWith(o) }

const restNote = model.RestNote
