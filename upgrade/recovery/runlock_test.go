package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// A run whose lock could not be given back (the API server lost mid-run)
// told the operator to run the same command again, which the Lease still
// held refused as another console's live lock. The release's error says
// so, when it lapses, and how to clear it at once.
func TestRunLockReleaseFailureSaysWhatARerunMeets(t *testing.T) {
	kube := kubefake.NewClientset()
	env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"},
		Conn: model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}}
	release, err := env.runLock(context.Background(), &recorded{})
	if err != nil {
		t.Fatal(err)
	}
	lost := func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("http2: client connection lost")
	}
	kube.PrependReactor("delete", "leases", lost)
	kube.PrependReactor("update", "leases", lost)
	kube.PrependReactor("get", "leases", lost)
	err = release(context.Background())
	if err == nil || !strings.Contains(err.Error(), "could not be released, so a rerun is refused until it turns stale") ||
		!strings.Contains(err.Error(), "`upgrade-console lock clear lease --force --cluster mgmt --kubeconfig /etc/kc --context prod`") {
		t.Errorf("release: %v", err)
	}
}
