package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=get;update;patch

// Storage migration, as the storage version migrator does it: each stored
// object rewritten by an update that changes nothing, which the API server
// stores in the new storage version, a page at a time; then the old
// versions dropped from the CustomResourceDefinition's
// status.storedVersions. The pass starts over after a manager restart: an
// object already rewritten is written again at no cost, its bytes unchanged.
const (
	// migrationSettle is how long after a kind's storage version changes
	// its migration starts: the API server takes the new storage version
	// from the CustomResourceDefinition asynchronously.
	migrationSettle = 5 * time.Second
	// migrationPage is how many objects one step rewrites, a step a
	// second: at most 100 writes a second to the API server.
	migrationPage  = 100
	migrationPause = time.Second
	migrationRetry = 30 * time.Second
)

// storageMigrations are the migrations under way, by CustomResourceDefinition.
type storageMigrations struct {
	// settle and page are migrationSettle and migrationPage, unless set.
	settle time.Duration
	page   int64

	mu       sync.Mutex
	underway map[string]*storageMigration
}

type storageMigration struct {
	// storage is the version it migrates to: one that changes again starts
	// the migration over.
	storage  string
	seen     time.Time
	next     string
	migrated int64
}

// migrateStorage takes a step of the migration of the stored objects of
// the CustomResourceDefinition crd, of the kind gk, to its storage
// version: what the Operator says of it, and how soon to take the next.
func (r *OperatorReconciler) migrateStorage(ctx context.Context, crd *unstructured.Unstructured, gk schema.GroupKind) (
	string, time.Duration, error) {
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	storage := storageVersion(crd)
	key := crd.GetName()
	m := r.migrations.step(key, stored, storage)
	if m == nil {
		return "", 0, nil
	}
	old := strings.Join(slices.DeleteFunc(slices.Clone(stored), func(v string) bool { return v == storage }), ", ")
	settle, page := migrationSettle, int64(migrationPage)
	if r.migrations.page > 0 {
		settle, page = r.migrations.settle, r.migrations.page
	}
	if wait := settle - time.Since(m.seen); wait > 0 {
		return fmt.Sprintf("migrating the stored objects of %s from %s to %s", crd.GetName(), old, storage), wait, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gk.WithVersion(storage).GroupVersion().WithKind(gk.Kind + "List"))
	err := r.APIReader.List(ctx, list, client.Limit(page), client.Continue(m.next))
	if apierrors.IsResourceExpired(err) {
		r.migrations.restart(key)
		return fmt.Sprintf("migrating the stored objects of %s from %s to %s: starting over", crd.GetName(), old, storage), migrationPause, nil
	}
	if err != nil {
		return "", 0, err
	}
	for i := range list.Items {
		// A conflict or a deletion: the object was written, or is gone.
		if err := r.Update(ctx, &list.Items[i]); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Sprintf("migrating the stored objects of %s from %s to %s: %s %s/%s: %v", crd.GetName(), old, storage,
				gk.Kind, list.Items[i].GetNamespace(), list.Items[i].GetName(), err), migrationRetry, nil
		}
	}
	done := r.migrations.advance(key, list.GetContinue(), int64(len(list.Items)))
	if list.GetContinue() != "" {
		remaining := int64(0)
		if list.GetRemainingItemCount() != nil {
			remaining = *list.GetRemainingItemCount()
		}
		return fmt.Sprintf("migrating the stored objects of %s from %s to %s: %d of %d", crd.GetName(), old, storage,
			done, done+remaining), migrationPause, nil
	}
	patched := crd.DeepCopy()
	if err := unstructured.SetNestedStringSlice(patched.Object, []string{storage}, "status", "storedVersions"); err != nil {
		return "", 0, err
	}
	// Were the storage version to change meanwhile, the API server refuses
	// storedVersions without it.
	if err := patchStatus(ctx, r.Client, crd, patched); err != nil {
		return "", 0, err
	}
	r.migrations.finish(key)
	ctrl.LoggerFrom(ctx).Info("Migrated the stored objects of a typed API", "crd", crd.GetName(), "from", old, "to", storage, "objects", done)
	return fmt.Sprintf("%d stored objects migrated from %s to %s", done, old, storage), 0, nil
}

// storageVersion is the version a CustomResourceDefinition stores objects in.
func storageVersion(crd *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		if v, ok := v.(map[string]any); ok && v["storage"] == true {
			name, _ := v["name"].(string)
			return name
		}
	}
	return ""
}

// step is the migration of the CustomResourceDefinition, begun when it
// first stores objects in other versions than storage; nil when it stores
// none.
func (s *storageMigrations) step(crd string, stored []string, storage string) *storageMigration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if storage == "" || len(stored) == 0 || len(stored) == 1 && stored[0] == storage {
		delete(s.underway, crd)
		return nil
	}
	if s.underway == nil {
		s.underway = map[string]*storageMigration{}
	}
	m := s.underway[crd]
	if m == nil || m.storage != storage {
		m = &storageMigration{storage: storage, seen: time.Now()}
		s.underway[crd] = m
	}
	copied := *m
	return &copied
}

// advance notes a page migrated; it returns how many objects are.
func (s *storageMigrations) advance(crd, next string, migrated int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.underway[crd]
	m.next, m.migrated = next, m.migrated+migrated
	return m.migrated
}

func (s *storageMigrations) restart(crd string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.underway[crd]
	m.next, m.migrated = "", 0
}

func (s *storageMigrations) finish(crd string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.underway, crd)
}
