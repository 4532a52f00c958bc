package sim

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

// reconcileMD is CAPI's MachineDeployment and MachineSet controllers: a
// template change creates a new MachineSet; machines of the new set are added
// up to maxSurge above the desired count, and old ones are deleted only while
// enough machines stay ready (maxUnavailable 0). With the InPlace strategy
// it only marks the deployment as needing an in-place upgrade.
func (s *Simulator) reconcileMD(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	md := s.get(kinds.MachineDeployment, ns, name)
	if md == nil {
		return 0, nil
	}
	owner := compMD + "/" + k
	now := s.clock.Now()
	version := str(md, "spec", "template", "spec", "version")
	tmpl := str(md, "spec", "template", "spec", "infrastructureRef", "name")
	replicas := num(md, "spec", "replicas")
	surge := num(md, "spec", "rollout", "strategy", "rollingUpdate", "maxSurge")
	if surge < 1 {
		surge = 1
	}

	sets := s.list(kinds.MachineSet, ns, map[string]string{model.LabelDeploymentName: name})
	var currentSet *unstructured.Unstructured
	revision := 0
	for _, ms := range sets {
		if r, _ := strconv.Atoi(annotation(ms, objects.AnnotationMDRevision)); r > revision {
			revision = r
		}
		if str(ms, "spec", "template", "spec", "version") == version && str(ms, "spec", "template", "spec", "infrastructureRef", "name") == tmpl {
			currentSet = ms
		}
	}

	var live, outdated, current, gone []*unstructured.Unstructured
	for _, m := range byAge(s.list(kinds.Machine, ns, map[string]string{model.LabelDeploymentName: name})) {
		if deleting(m) {
			gone = append(gone, m)
			continue
		}
		live = append(live, m)
		if s.notUpToDate(m, version, tmpl) != "" {
			outdated = append(outdated, m)
		} else {
			current = append(current, m)
		}
	}
	// Machines being deleted still count as replicas until they are gone.
	var draining atomic.Int64
	err := parallel(ctx, gone, func(ctx context.Context, m *unstructured.Unstructured) error {
		left, done, err := s.retire(ctx, owner, compMD, m)
		switch {
		case err != nil:
			return err
		case done:
			s.emit(compMS, md, false, "SuccessfulDelete", "Deleted machine %s", m.GetName())
		default:
			draining.Add(1)
			s.requeue(s.l.md, k, left)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	ready := int64(0)
	for _, m := range live {
		if running(m) {
			ready++
		}
	}
	st := objects.MDState{
		Desired: replicas, Replicas: int64(len(live)) + draining.Load(), Ready: ready, Available: ready, UpToDate: int64(len(current)),
		Generation: md.GetGeneration(), Versions: versionCounts(live), Cluster: s.sc.ClusterName, Name: name,
	}
	if len(outdated) > 0 {
		st.RollingOut = true
		st.RollingMessage = fmt.Sprintf("Rolling out %d not up-to-date replicas\n%s", len(outdated), s.notUpToDate(outdated[0], version, tmpl))
	}
	notUpToDate := func(m *unstructured.Unstructured) string { return s.notUpToDate(m, version, tmpl) }
	if err := s.markOutdated(ctx, owner, compMD, outdated, notUpToDate); err != nil {
		return 0, err
	}

	switch {
	case s.sc.InPlace():
		if err := s.mdInPlace(ctx, owner, md, outdated); err != nil {
			return 0, err
		}
	case len(outdated) > 0 && currentSet == nil:
		hash := s.cfg.Names.Suffix(10)
		ms := objects.MachineSet(md, name+"-"+hash, hash, 0, revision+1)
		if _, err := s.create(ctx, owner, compMD, kinds.MachineSet, ms); err != nil {
			return 0, err
		}
		if _, err := s.patch(ctx, owner, compMD, kinds.MachineDeployment, ns, name, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{objects.AnnotationMDRevision: strconv.Itoa(revision + 1)}},
		}); err != nil {
			return 0, err
		}
		s.emit(compMD, md, false, "SuccessfulCreate", "Created MachineSet %s (%s)", ms.GetName(), version)
	case len(outdated) > 0:
		// Retire old machines while the ready count stays at the desired
		// count, then surge new ones.
		n := int64(len(live))
		excess := n - replicas
		var retire, create []*unstructured.Unstructured
		for _, old := range outdated {
			if excess <= 0 || ready-boolInt(running(old)) < replicas {
				break
			}
			retire = append(retire, old)
			excess--
			n--
			if running(old) {
				ready--
			}
		}
		for c := int64(len(current)); n < replicas+surge && c < replicas; n, c = n+1, c+1 {
			create = append(create, s.newWorker(ns, name, currentSet, version, tmpl))
		}
		if err := s.scaleMD(ctx, owner, currentSet, retire, create); err != nil {
			return 0, err
		}
	case currentSet != nil && int64(len(live)) != replicas:
		// Scaled (the worker group's count changed): new machines on the
		// current template, or the newest ones deleted, as a MachineSet
		// with the Newest delete policy does.
		var retire, create []*unstructured.Unstructured
		for n := int64(len(live)); n < replicas; n++ {
			create = append(create, s.newWorker(ns, name, currentSet, version, tmpl))
		}
		for i := len(live) - 1; i >= 0 && int64(len(live)-len(retire)) > replicas; i-- {
			retire = append(retire, live[i])
		}
		if err := s.scaleMD(ctx, owner, currentSet, retire, create); err != nil {
			return 0, err
		}
	}
	if err := s.syncSets(ctx, owner, sets); err != nil {
		return 0, err
	}
	return 0, s.setStatus(ctx, owner, compMD, kinds.MachineDeployment, md, objects.MDStatus(statusMap(md), st, now))
}

// newWorker is a new worker Machine of a MachineDeployment's current
// MachineSet.
func (s *Simulator) newWorker(ns, md string, set *unstructured.Unstructured, version, tmpl string) *unstructured.Unstructured {
	return objects.Machine(objects.MachineSpec{
		Name: s.cfg.Names.Generate(set.GetName()), Namespace: ns, Cluster: s.sc.ClusterName, Role: model.RoleWorker,
		Owner: objects.OwnerOf(set), Version: version, InfraTemplate: tmpl,
		Deployment: md, MachineSet: set.GetName(), TemplateHash: set.GetLabels()[objects.LabelMachineTemplateHash],
	})
}

// scaleMD retires and creates a MachineDeployment's machines.
func (s *Simulator) scaleMD(ctx context.Context, owner string, set *unstructured.Unstructured, retire, create []*unstructured.Unstructured) error {
	err := parallel(ctx, retire, func(ctx context.Context, m *unstructured.Unstructured) error {
		_, _, err := s.retire(ctx, owner, compMD, m)
		return err
	})
	if err != nil {
		return err
	}
	return parallel(ctx, create, func(ctx context.Context, m *unstructured.Unstructured) error {
		if _, err := s.create(ctx, owner, compMS, kinds.Machine, m); err != nil {
			return err
		}
		s.emit(compMS, set, false, "SuccessfulCreate", "Created machine %s", m.GetName())
		return nil
	})
}

// syncSets keeps each MachineSet's replicas and status in line with its
// machines.
func (s *Simulator) syncSets(ctx context.Context, owner string, sets []*unstructured.Unstructured) error {
	for _, ms := range sets {
		var n, ready int64
		for _, m := range s.list(kinds.Machine, ms.GetNamespace(), map[string]string{objects.LabelSetName: ms.GetName()}) {
			if deleting(m) {
				continue
			}
			n++
			if running(m) {
				ready++
			}
		}
		if num(ms, "spec", "replicas") != n {
			if _, err := s.patch(ctx, owner, compMS, kinds.MachineSet, ms.GetNamespace(), ms.GetName(), map[string]any{"spec": map[string]any{"replicas": n}}); err != nil {
				return err
			}
		}
		l := ms.GetLabels()
		st := objects.MSStatus(n, ready, n, ms.GetGeneration(), s.sc.ClusterName, l[model.LabelDeploymentName], l[objects.LabelMachineTemplateHash])
		if err := s.setStatus(ctx, owner, compMS, kinds.MachineSet, ms, st); err != nil {
			return err
		}
	}
	return nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// parallel runs fn for every item, a few at a time: a large fleet replaces
// dozens of machines per pass, and each is several requests.
func parallel(ctx context.Context, items []*unstructured.Unstructured, fn func(context.Context, *unstructured.Unstructured) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, it := range items {
		g.Go(func() error { return fn(ctx, it) })
	}
	return g.Wait()
}
