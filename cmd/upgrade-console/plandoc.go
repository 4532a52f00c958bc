package main

import (
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The schema of `plan -o json` and `-o yaml`, named in the document as
// kubectl's and clusterctl's are: a script can tell a document of another
// version from this one rather than misread it. Fields are only ever added
// under this version; a rename or a removal is a new version.
const (
	planAPIVersion = "upgrade-console/v1"
	planKind       = "Plan"
)

type planHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// planVerdict is the plan's outcome, as its exit code gives it: a script
// had to read it out of preflight[].blocking, or from the exit code alone.
// mayStart is the table's "the upgrade may start" (exit 0); blocked names
// the checks that stop it (exit 3, or 1 when the spec's content is what
// the API server refused), [] when none does.
type planVerdict struct {
	MayStart bool     `json:"mayStart"`
	Blocked  []string `json:"blocked"`
}

func verdictOf(results []model.CheckResult) planVerdict {
	v := planVerdict{Blocked: []string{}}
	for _, r := range results {
		if r.Blocking {
			v.Blocked = append(v.Blocked, r.Name)
		}
	}
	v.MayStart = len(v.Blocked) == 0
	return v
}

// offlinePlanDoc is the offline plan as -o json and -o yaml print it.
type offlinePlanDoc struct {
	planHeader
	*model.Plan
	planVerdict
}

func offlineDoc(p *model.Plan) offlinePlanDoc {
	return offlinePlanDoc{planHeader{planAPIVersion, planKind}, p, verdictOf(p.Preflight)}
}

// livePlanDoc is the live plan (--cluster) as -o json and -o yaml print it.
type livePlanDoc struct {
	planHeader
	*upgrade.Plan
	planVerdict
	// NeedsForceConflicts: conflicts is not empty, so `apply --yes` without
	// --force-conflicts is refused (exit 3) though mayStart is true, which
	// speaks of the checks alone: a CI gate read mayStart and went on.
	NeedsForceConflicts bool `json:"needsForceConflicts"`
}

// liveDoc gives the lists a script reads as [] when empty, where they were
// left out: `jq '.conflicts | length'` failed on a plan with none. Conflicts
// stay null when the spec's dry run was not made (spec-accepted says why),
// since none were found is not known then.
func liveDoc(p *upgrade.Plan) livePlanDoc {
	q := *p
	if q.Skipped == nil {
		q.Skipped = []string{}
	}
	if q.Conflicts == nil && p.Target != nil && p.Target.SpecDryRun != nil {
		q.Conflicts = []upgrade.FieldConflict{}
	}
	return livePlanDoc{planHeader{planAPIVersion, planKind}, &q, verdictOf(p.Preflight), len(q.Conflicts) > 0}
}
