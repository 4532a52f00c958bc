package release

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"v0.19.0":            "eksa-v0-19-0",
		"v0.19.0-dev+latest": "eksa-v0-19-0-dev-plus-latest",
		Target.Version:       "eksa-v0-21-2",
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKubeVersions(t *testing.T) {
	k, ok := Target.Kube("1.31")
	if !ok {
		t.Fatal("target release has no 1.31")
	}
	if got := k.KubeadmVersion(); got != "v1.31.3-eks-1-31-11" {
		t.Errorf("KubeadmVersion = %q", got)
	}
	if got := k.EksDName(); got != "kubernetes-1-31-eks-11" {
		t.Errorf("EksDName = %q", got)
	}
	if got := k.KubeletVersion(); !strings.HasPrefix(got, "v1.31.3-eks-") {
		t.Errorf("KubeletVersion = %q", got)
	}
	back, ok := ByKubeadmVersion(k.KubeadmVersion())
	if !ok || back != k {
		t.Errorf("ByKubeadmVersion round trip: %v %v", back, ok)
	}
	if _, ok := ByKubeadmVersion("v1.99.0-eks-1-99-1"); ok {
		t.Error("unknown version found")
	}
	if img := UpgraderImage(k.KubeadmVersion()); !strings.Contains(img, "v1-31-11-eks-a-84") {
		t.Errorf("UpgraderImage = %q", img)
	}
}

// The two releases must make a real upgrade: every component changes but
// kindnetd (unused), and the target supports the current Kubernetes
// version and the next one.
func TestReleasesDiffer(t *testing.T) {
	for k, v := range Current.Components {
		if k != "kindnetd" && Target.Components[k] == v {
			t.Errorf("%s is %s in both releases", k, v)
		}
	}
	for _, minor := range []string{"1.30", "1.31"} {
		if _, ok := Target.Kube(minor); !ok {
			t.Errorf("target lacks Kubernetes %s", minor)
		}
	}
	if Minor(Target.Version) == Minor(Current.Version) {
		t.Error("target is not the next minor release")
	}
}

func TestBundlesShape(t *testing.T) {
	b := Current.Bundles("eksa-system")
	if b.GetName() != "bundles-78" {
		t.Errorf("name %s", b.GetName())
	}
	vbs := b.Object["spec"].(map[string]any)["versionsBundles"].([]any)
	if len(vbs) != len(Current.Kubes) {
		t.Fatalf("%d versions bundles", len(vbs))
	}
	for _, key := range []string{"bootstrap", "bottlerocketHostContainers", "certManager", "cilium", "clusterAPI", "controlPlane", "docker", "eksD", "eksa", "etcdadmBootstrap", "etcdadmController", "flux", "kindnetd", "kubeVersion", "packageController", "vSphere"} {
		if _, ok := vbs[0].(map[string]any)[key]; !ok {
			t.Errorf("versions bundle lacks required %s", key)
		}
	}
	er := Target.EKSARelease("eksa-system")
	if er.GetName() != "eksa-v0-21-2" || er.Object["spec"].(map[string]any)["bundlesRef"].(map[string]any)["name"] != "bundles-84" {
		t.Errorf("EKSARelease %v", er.Object)
	}
}
