package model

// AnnotationManagedByCLI is set to "true" on the EKS-A Cluster by the EKS-A
// CLI (eksctl anywhere) while it drives an operation; the EKS-A controller
// takes no action on the cluster meanwhile (cluster_types.go). An
// interrupted CLI run leaves it behind, with EKS-A's paused annotation.
const AnnotationManagedByCLI = "anywhere.eks.amazonaws.com/managed-by-cli"

// ManagedByCLI reports whether the EKS-A CLI claims the cluster.
func (c *EKSACluster) ManagedByCLI() bool {
	return c != nil && c.Annotations[AnnotationManagedByCLI] == "true"
}

// AnnotationEtcdRollbackRecord on the EKS-A Cluster records an etcd rollback
// by upgrade-console (see upgrade/recovery): EKS-A reconcile is paused on
// purpose while it is there.
const AnnotationEtcdRollbackRecord = "upgrade-console/etcd-rollback"
