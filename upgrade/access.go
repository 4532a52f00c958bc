package upgrade

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckApplyAccess is the preflight check that the identity may make the
// writes an apply makes besides the spec's own (which spec-accepted's dry
// run covers), and the reads of its snapshot: an identity that may read the
// lock but not take it learned it from a refused write after the
// confirmation, as bad input (exit 1), and one that may not list the
// MachineDeployments passed a dry run and then stopped at the snapshot.
const CheckApplyAccess = "apply-access"

// accessNeed is one request an apply makes, and what it is for.
type accessNeed struct {
	verb, group, resource string
	// name, when set, is the object asked of, by the cluster's name: the
	// lock's own Lease (a Role may grant update and delete by
	// resourceNames; create cannot be), the cluster's EtcdadmCluster and
	// KubeadmControlPlane.
	name func(cluster string) string
	what string
}

var applyNeeds = []accessNeed{
	{verb: "create", group: "coordination.k8s.io", resource: "leases", what: "take the upgrade lock"},
	{verb: "update", group: "coordination.k8s.io", resource: "leases", name: LockName, what: "renew, and keep, the upgrade lock"},
	{verb: "delete", group: "coordination.k8s.io", resource: "leases", name: LockName, what: "release the upgrade lock"},
	{verb: "create", group: "", resource: "configmaps", what: "save the pre-upgrade snapshot"},
	// The snapshot's reads (Snapshotter.collect). The spec's own objects
	// and the EKS-A Cluster it reads too are read by the plan already
	// (spec-accepted's dry run, the current side).
	{verb: "get", group: GVREtcdadmCluster.Group, resource: GVREtcdadmCluster.Resource, name: func(c string) string { return c + "-etcd" },
		what: "read the etcd cluster for the pre-upgrade snapshot"},
	{verb: "get", group: GVRKCP.Group, resource: GVRKCP.Resource, name: func(c string) string { return c },
		what: "read the control plane for the pre-upgrade snapshot"},
	{verb: "list", group: GVRMachineDeploy.Group, resource: GVRMachineDeploy.Resource,
		what: "read the worker node groups for the pre-upgrade snapshot"},
}

// ApplyAccess is what the API server said of those requests.
type ApplyAccess struct {
	// Denied lists the requests refused, as "create
	// leases.coordination.k8s.io in eksa-system (to take the upgrade lock)".
	Denied []string
	// Grant is the Role rules that allow them, one per resource (and
	// object): "{apiGroups: [cluster.x-k8s.io], resources:
	// [machinedeployments], verbs: [list]}".
	Grant []string
	// CanI is the kubectl command that asks of the first one refused,
	// without "kubectl": the check that prints it adds the connection flags.
	CanI string
	// Err is why the server could not be asked (SelfSubjectAccessReview
	// refused or unanswered): nothing is known.
	Err error
}

// ReadApplyAccess asks the API server, one SelfSubjectAccessReview per
// write, whether the identity (the --as one included) may make them in the
// system namespace.
func ReadApplyAccess(ctx context.Context, kube kubernetes.Interface, namespace, cluster string) *ApplyAccess {
	return readAccess(ctx, kube, namespace, cluster, applyNeeds)
}

// ReadLockAccess asks the API server whether the identity may take, renew
// and release the upgrade lock: what a recovery action that holds the lock
// for its run (an etcd rollback) writes besides its steps.
func ReadLockAccess(ctx context.Context, kube kubernetes.Interface, namespace, cluster string) *ApplyAccess {
	var needs []accessNeed
	for _, n := range applyNeeds {
		if n.group == "coordination.k8s.io" {
			needs = append(needs, n)
		}
	}
	return readAccess(ctx, kube, namespace, cluster, needs)
}

func readAccess(ctx context.Context, kube kubernetes.Interface, namespace, cluster string, needs []accessNeed) *ApplyAccess {
	out := &ApplyAccess{}
	type ruleKey struct{ group, resource, name string }
	var keys []ruleKey
	verbs := map[ruleKey][]string{}
	for _, n := range needs {
		ra := &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: n.verb, Group: n.group, Resource: n.resource}
		if n.name != nil {
			ra.Name = n.name(cluster)
		}
		r, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra}}, metav1.CreateOptions{})
		if err != nil {
			out.Err = fmt.Errorf("asking whether it may %s %s: %w", n.verb, qualified(n), err)
			return out
		}
		if !r.Status.Allowed {
			out.Denied = append(out.Denied, fmt.Sprintf("%s %s in %s (to %s)", n.verb, qualified(n), namespace, n.what))
			if out.CanI == "" {
				obj := qualified(n)
				if ra.Name != "" {
					obj += "/" + ra.Name
				}
				out.CanI = fmt.Sprintf("auth can-i %s %s -n %s", n.verb, obj, namespace)
			}
			k := ruleKey{n.group, n.resource, ra.Name}
			if _, ok := verbs[k]; !ok {
				keys = append(keys, k)
			}
			verbs[k] = append(verbs[k], n.verb)
		}
	}
	for _, k := range keys {
		names := ""
		if k.name != "" {
			names = ", resourceNames: [" + k.name + "]"
		}
		out.Grant = append(out.Grant, fmt.Sprintf("{apiGroups: [%s], resources: [%s]%s, verbs: [%s]}",
			apiGroup(k.group), k.resource, names, strings.Join(verbs[k], ", ")))
	}
	return out
}

// apiGroup is a rule's group as a Role's YAML takes it: the core group
// is "", which bare would read as nothing.
func apiGroup(g string) string {
	if g == "" {
		return `""`
	}
	return g
}

func qualified(n accessNeed) string {
	if n.group == "" {
		return n.resource
	}
	return n.resource + "." + n.group
}

func checkApplyAccess(_ context.Context, in *Inputs) model.CheckResult {
	a := in.Access
	switch {
	case a == nil:
		return warn("not checked: the plan was made without asking the API server", "")
	case a.Err != nil:
		// Not a block: the apply's own writes will tell, and the lock's
		// read (upgrade-lock) already says whether Leases are visible.
		return warn("cannot tell whether the console may take the lock and save the snapshot: "+a.Err.Error(),
			"grant create on selfsubjectaccessreviews.authorization.k8s.io (every authenticated user has it by default), or check the rights below by hand")
	case len(a.Denied) > 0:
		return failed("the console may not "+strings.Join(a.Denied, "; "),
			"grant them to this identity (a Role in "+in.System+" with the rules "+strings.Join(a.Grant, ", ")+
				", and a RoleBinding; `kubectl"+in.conn().String()+" "+a.CanI+"` says whether it may), or run the apply as one that has them (--as)")
	}
	return pass("the console may take, renew and release the upgrade lock and save the snapshot")
}
