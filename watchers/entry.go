package watchers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// entry is what the informers cache: the object's key and resource version
// (the informer's bookkeeping reads them through metav1.Object) and its
// translated model value. The API object itself, managedFields included, is
// garbage right after translation.
//
// entry implements metav1.Object by hand rather than embedding an
// ObjectMeta: at 30,000 cached objects the ~250 bytes of an empty
// ObjectMeta each would be 7 MB for nothing. Setters are no-ops: entries are
// never modified.
type entry struct {
	namespace, name, resourceVersion string
	value                            any // nil when the object is of no interest (an unrelated event)
}

func newEntry(namespace, name, rv string, v any) *entry {
	return &entry{namespace: namespace, name: name, resourceVersion: rv, value: v}
}

var (
	_ metav1.Object  = (*entry)(nil)
	_ runtime.Object = (*entry)(nil)
)

func (e *entry) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (e *entry) DeepCopyObject() runtime.Object   { return e }

func (e *entry) GetNamespace() string                  { return e.namespace }
func (e *entry) GetName() string                       { return e.name }
func (e *entry) GetResourceVersion() string            { return e.resourceVersion }
func (e *entry) GetGenerateName() string               { return "" }
func (e *entry) GetUID() types.UID                     { return "" }
func (e *entry) GetGeneration() int64                  { return 0 }
func (e *entry) GetSelfLink() string                   { return "" }
func (e *entry) GetCreationTimestamp() metav1.Time     { return metav1.Time{} }
func (e *entry) GetDeletionTimestamp() *metav1.Time    { return nil }
func (e *entry) GetDeletionGracePeriodSeconds() *int64 { return nil }
func (e *entry) GetLabels() map[string]string          { return nil }
func (e *entry) GetAnnotations() map[string]string {
	if e.value == initialEventsEnd {
		return initialEventsEndAnnotations
	}
	return nil
}
func (e *entry) GetFinalizers() []string                       { return nil }
func (e *entry) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (e *entry) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (e *entry) SetNamespace(string)                           {}
func (e *entry) SetName(string)                                {}
func (e *entry) SetResourceVersion(string)                     {}
func (e *entry) SetGenerateName(string)                        {}
func (e *entry) SetUID(types.UID)                              {}
func (e *entry) SetGeneration(int64)                           {}
func (e *entry) SetSelfLink(string)                            {}
func (e *entry) SetCreationTimestamp(metav1.Time)              {}
func (e *entry) SetDeletionTimestamp(*metav1.Time)             {}
func (e *entry) SetDeletionGracePeriodSeconds(*int64)          {}
func (e *entry) SetLabels(map[string]string)                   {}
func (e *entry) SetAnnotations(map[string]string)              {}
func (e *entry) SetFinalizers([]string)                        {}
func (e *entry) SetOwnerReferences([]metav1.OwnerReference)    {}
func (e *entry) SetManagedFields([]metav1.ManagedFieldsEntry)  {}
