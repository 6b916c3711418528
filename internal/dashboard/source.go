package dashboard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Source is what the dashboard knows of the cluster: one informer per kind,
// run with the user's credentials in the namespaces they may list, and who
// waits for a change of what.
type Source struct {
	// Namespace is the one namespace watched, "" for all.
	Namespace string
	cache     cache.Cache
	// client asks what the user may watch.
	client client.Client
	// watching are the kinds watched: those the user may list and watch.
	watching map[string]bool
	hub      *hub

	mu sync.Mutex
	// typed are the informers of the kinds of typed objects that hold
	// their Instances' records, started as Instances of them appear; nil
	// for a kind the user may not watch.
	typed map[schema.GroupVersionKind]cache.Informer
}

// Scope is the namespace the dashboard watches: every one ("") when the
// user may list and watch Instances in all of them, else ns — so it shows
// what they may see and asks for nothing more.
func Scope(ctx context.Context, c client.Client, ns string) (string, error) {
	all, err := mayWatch(ctx, c, kudov1beta1.GroupVersion.Group, "instances", "")
	if err != nil || all {
		return "", err
	}
	return ns, nil
}

// mayWatch says whether the user may list and watch resource in ns ("":
// all namespaces).
func mayWatch(ctx context.Context, c client.Client, group, resource, ns string) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb, Namespace: ns},
		}}
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking the API server what you may see: %w", err)
		}
		if !review.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// watched are the kinds the dashboard watches, with their resources.
var watched = []struct {
	obj             client.Object
	group, resource string
}{
	{&kudov1beta1.Instance{}, kudov1beta1.GroupVersion.Group, "instances"},
	{&kudov1beta1.Operator{}, kudov1beta1.GroupVersion.Group, "operators"},
	{&kudov1beta1.OperatorVersion{}, kudov1beta1.GroupVersion.Group, "operatorversions"},
	{&corev1.Event{}, "", "events"},
	{&kudov1alpha1.Rollout{}, kudov1alpha1.GroupVersion.Group, "rollouts"},
}

// NewSource starts the informers in namespace ns ("" for all) of the kinds
// the user may list and watch there (c asks), and waits until they hold
// what the API server has. Rollouts are watched where their kind is
// served.
func NewSource(ctx context.Context, cfg *rest.Config, c client.Client, ns string) (*Source, error) {
	opts := cache.Options{
		Scheme:           c.Scheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			// Only kudo-ng's events: the timeline's.
			&corev1.Event{}: {Field: fields.OneTermEqualSelector("involvedObject.apiVersion", kudov1beta1.GroupVersion.String())},
			// The templates are the bulk of an OperatorVersion, and no page
			// shows them.
			&kudov1beta1.OperatorVersion{}: {Transform: withoutTemplates},
		},
	}
	if ns != "" {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	ca, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	s := &Source{Namespace: ns, cache: ca, client: c, hub: newHub(), watching: map[string]bool{},
		typed: map[schema.GroupVersionKind]cache.Informer{}}
	var kinds []client.Object
	for _, w := range watched {
		if _, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: w.group, Kind: kindOf(w.obj)}); err != nil {
			continue
		}
		may, err := mayWatch(ctx, c, w.group, w.resource, ns)
		if err != nil {
			return nil, err
		}
		if may {
			s.watching[kindOf(w.obj)] = true
			kinds = append(kinds, w.obj)
		}
	}
	go func() { _ = ca.Start(ctx) }()
	for _, obj := range kinds {
		informer, err := ca.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", kindOf(obj), err)
		}
		if _, err := informer.AddEventHandler(s.hub.handler(kindOf(obj))); err != nil {
			return nil, err
		}
	}
	if !ca.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the watches did not start: %w", ctx.Err())
	}
	return s, nil
}

// Hidden are the kinds the user may not list and watch, which the pages do
// not show.
func (s *Source) Hidden() []string {
	var out []string
	for _, w := range watched {
		if kind := kindOf(w.obj); !s.watching[kind] {
			out = append(out, kind)
		}
	}
	return out
}

func withoutTemplates(obj any) (any, error) {
	if ov, ok := obj.(*kudov1beta1.OperatorVersion); ok {
		ov.Spec.Templates = nil
		ov.ManagedFields = nil
	}
	return obj, nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *kudov1beta1.Instance:
		return "Instance"
	case *kudov1beta1.Operator:
		return "Operator"
	case *kudov1beta1.OperatorVersion:
		return "OperatorVersion"
	case *kudov1alpha1.Rollout:
		return "Rollout"
	default:
		return "Event"
	}
}

// Snapshot is what the informers hold now. It shares their objects but for
// typed Instances, which are copies with the records their objects hold.
func (s *Source) Snapshot(ctx context.Context) (*Snapshot, error) {
	snap := &Snapshot{Now: time.Now(), Namespace: s.Namespace}
	var instances kudov1beta1.InstanceList
	var operators kudov1beta1.OperatorList
	var versions kudov1beta1.OperatorVersionList
	var events corev1.EventList
	var rollouts kudov1alpha1.RolloutList
	lists := map[string]client.ObjectList{"Instance": &instances, "Operator": &operators, "OperatorVersion": &versions, "Event": &events,
		"Rollout": &rollouts}
	for kind, list := range lists {
		if !s.watching[kind] {
			continue
		}
		if err := s.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	snap.Instances, snap.Operators, snap.OperatorVersions, snap.Events = instances.Items, operators.Items, versions.Items, events.Items
	snap.Rollouts = rollouts.Items
	for k := range snap.Instances {
		if holder := typedapi.HolderOf(&snap.Instances[k]); holder != nil {
			snap.Instances[k] = *s.withRecord(ctx, &snap.Instances[k], holder)
		}
	}
	return snap, nil
}

// withRecord is i with the record its typed object holds, once the
// object's informer holds it; i as it is until then (the informer's start
// is a change the pages hear of).
func (s *Source) withRecord(ctx context.Context, i *kudov1beta1.Instance, holder *unstructured.Unstructured) *kudov1beta1.Instance {
	gvk := holder.GroupVersionKind()
	s.mu.Lock()
	informer, asked := s.typed[gvk]
	if !asked {
		informer = s.watchTyped(ctx, holder)
		s.typed[gvk] = informer
	}
	s.mu.Unlock()
	if informer == nil || !informer.HasSynced() {
		return i
	}
	if err := s.cache.Get(ctx, client.ObjectKeyFromObject(holder), holder); err != nil {
		return i
	}
	record, ok, err := typedapi.RecordOf(i, holder)
	if err != nil || !ok {
		return i
	}
	i = i.DeepCopy()
	i.Status = record
	return i
}

// watchTyped starts the informer of holder's kind, when the user may list
// and watch it; nil when not (the Instances of that kind show their own
// status).
func (s *Source) watchTyped(ctx context.Context, holder *unstructured.Unstructured) cache.Informer {
	gvk := holder.GroupVersionKind()
	mapping, err := s.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil
	}
	if may, err := mayWatch(ctx, s.client, gvk.Group, mapping.Resource.Resource, s.Namespace); err != nil || !may {
		return nil
	}
	informer, err := s.cache.GetInformer(ctx, holder, cache.BlockUntilSynced(false))
	if err != nil {
		return nil
	}
	if _, err := informer.AddEventHandler(s.hub.handler("Instance")); err != nil {
		return nil
	}
	return informer
}

// Instance is the Instance ns/name and its OperatorVersion from snap; nil
// for what does not exist.
func (snap *Snapshot) Instance(ns, name string) (*kudov1beta1.Instance, *kudov1beta1.OperatorVersion) {
	i := find(snap.Instances, ns, name)
	if i == nil {
		return nil, nil
	}
	ovns := i.Spec.OperatorVersion.Namespace
	if ovns == "" {
		ovns = ns
	}
	return i, find(snap.OperatorVersions, ovns, i.Spec.OperatorVersion.Name)
}

// Rollout is the Rollout ns/name from snap, nil when it does not exist.
func (snap *Snapshot) Rollout(ns, name string) *kudov1alpha1.Rollout {
	return find(snap.Rollouts, ns, name)
}

// find is the object ns/name of items, nil when none is.
func find[T any, P interface {
	*T
	client.Object
}](items []T, ns, name string) *T {
	for k := range items {
		if o := P(&items[k]); o.GetNamespace() == ns && o.GetName() == name {
			return &items[k]
		}
	}
	return nil
}

// EventsOf are the events of the object kind ns/name in snap.
func (snap *Snapshot) EventsOf(kind, ns, name string) []corev1.Event {
	var out []corev1.Event
	for _, e := range snap.Events {
		if o := e.InvolvedObject; o.Kind == kind && o.Namespace == ns && o.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Subscribe is a channel that is sent to (at most one pending) each time
// an object whose key want accepts changes: "Kind/namespace/name", an
// event's key being its object's. Cancel stops it.
func (s *Source) Subscribe(want func(key string) bool) (<-chan struct{}, func()) {
	return s.hub.subscribe(want)
}

// hub tells the subscribers of a key that it changed.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	want func(string) bool
	ch   chan struct{}
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe(want func(string) bool) (<-chan struct{}, func()) {
	sub := &subscriber{want: want, ch: make(chan struct{}, 1)}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub.ch, func() {
		h.mu.Lock()
		delete(h.subs, sub)
		h.mu.Unlock()
	}
}

func (h *hub) publish(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if !sub.want(key) {
			continue
		}
		select {
		case sub.ch <- struct{}{}:
		default:
		}
	}
}

// handler publishes the key of each object the informer adds, updates or
// deletes; kind names the informer's objects.
func (h *hub) handler(kind string) toolscache.ResourceEventHandler {
	key := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		switch o := obj.(type) {
		case *corev1.Event:
			h.publish(strings.Join([]string{o.InvolvedObject.Kind, o.InvolvedObject.Namespace, o.InvolvedObject.Name}, "/"))
		case client.Object:
			h.publish(kind + "/" + o.GetNamespace() + "/" + o.GetName())
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    key,
		UpdateFunc: func(_, obj any) { key(obj) },
		DeleteFunc: key,
	}
}
