// Package rbac derives the rules an Instance's service account needs when
// the manager acts as it (multi-tenant clusters), from what each task of
// every plan needs as the task registry says (task.Kind.Access): pure, and
// table-tested. kubectl kudo rbac renders the plans and prints the result.
package rbac

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
)

var (
	secrets            = schema.GroupResource{Resource: "secrets"}
	instanceFinalizers = schema.GroupResource{Group: kudov1beta1.GroupVersion.Group, Resource: "instances/finalizers"}
	roles              = schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}
	clusterRoles       = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}

	namespaceKind          = schema.GroupKind{Kind: "Namespace"}
	roleKind               = schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}
	clusterRoleKind        = schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}
	roleBindingKind        = schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}
	clusterRoleBindingKind = schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}
)

// Task is one task of a plan, rendered.
type Task struct {
	// Where names the task: its plan, phase, step and name, and the
	// Instance when it is a child's.
	Where string
	Kind  kudov1beta1.TaskKind
	// Template is the one template the objects come from, if known.
	Template string
	task.Rendered
}

// Input is what an Instance does: the tasks of all its plans, and its
// children's.
type Input struct {
	Namespace string
	Instance  string
	// Secrets are those the values of its secret parameters are read from.
	Secrets []string
	Tasks   []Task
	// Held are the objects the Instance and its children hold now, read
	// from the cluster: a change of parameters that renames one prunes it.
	Held []kudov1beta1.ObjectRef
}

// Grants are the rules a service account needs, by where they hold.
type Grants struct {
	// Namespaces are the rules in each namespace; the Instance's is always one.
	Namespaces map[string][]rbacv1.PolicyRule
	// Cluster are the rules on cluster-scoped objects.
	Cluster []rbacv1.PolicyRule
	// Notes say why some rules are there, and what they cannot do.
	Notes []string
}

// Kinds maps kinds to resources, as a meta.RESTMapper does.
type Kinds interface {
	RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
}

// Derive finds the rules an Instance's service account needs for the
// tasks: cluster maps the kinds neither built in nor defined by a
// CustomResourceDefinition of the tasks; nil offline.
func Derive(in *Input, cluster Kinds) (*Grants, error) {
	d := &deriver{
		in: in, kinds: &kinds{defined: definedKinds(in.Tasks), cluster: cluster},
		access: newAccess(), roles: sets.New[string](), namespaces: sets.New[string](),
	}
	d.access.namespace(in.Namespace)
	for k := range in.Tasks {
		d.collectRoles(&in.Tasks[k])
	}
	owners := []string{in.Instance}
	for k := range in.Tasks {
		t := &in.Tasks[k]
		if err := d.task(t); err != nil {
			return nil, err
		}
		if t.Child != "" {
			owners = append(owners, t.Child)
		}
	}
	// The namespaced objects in the Instance's namespace, its Pipe pods and
	// files and its children name the Instance their owner, blocking its
	// deletion: with OwnerReferencesPermissionEnforcement, that needs update
	// on its finalizers.
	d.access.name(in.Namespace, instanceFinalizers, "update", owners...)
	d.access.name(in.Namespace, secrets, "get", in.Secrets...)
	d.held(in.Held)
	for _, ns := range sets.List(d.namespaces) {
		if _, used := d.access.scopes[ns]; used && ns != in.Namespace {
			d.note("namespace %s is made by the package: the Role in it can be applied once it exists", ns)
		}
	}
	g := &Grants{Namespaces: map[string][]rbacv1.PolicyRule{}, Notes: d.notes}
	for _, ns := range sets.List(sets.KeySet(d.access.scopes)) {
		if ns == "" {
			g.Cluster = d.access.rules(ns)
		} else {
			g.Namespaces[ns] = d.access.rules(ns)
		}
	}
	return g, nil
}

type deriver struct {
	in     *Input
	kinds  *kinds
	access *access
	// roles are the Roles (namespace/name) and ClusterRoles (/name) the
	// tasks apply, whose rules the account holds.
	roles sets.Set[string]
	// namespaces are the Namespaces the tasks apply.
	namespaces sets.Set[string]
	notes      []string
}

func (d *deriver) task(t *Task) error {
	kind, err := task.For(t.Kind)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Where, err)
	}
	for _, acc := range kind.Access(&t.Rendered) {
		if err := d.grant(t, acc); err != nil {
			return err
		}
		if acc.Object != nil {
			if err := d.escalation(t, acc.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// grant grants an access on the resource of its kind, where it lives: on
// the object it names, or on every object of the resource when the name is
// known only once the plan runs.
func (d *deriver) grant(t *Task, acc task.Access) error {
	m, err := d.kinds.mapping(acc.Kind)
	if err != nil {
		kind := acc.Kind.Kind
		if acc.Kind.Group != "" {
			kind += "." + acc.Kind.Group
		}
		if t.Template != "" {
			kind += " (template " + t.Template + ")"
		}
		return fmt.Errorf("%s: kind %s: %w", t.Where, kind, err)
	}
	ns := ""
	if m.namespaced {
		ns = cmp.Or(acc.Namespace, d.in.Namespace)
	}
	resource := m.resource
	if acc.Subresource != "" {
		resource.Resource += "/" + acc.Subresource
	}
	if acc.Name == "" {
		d.access.grant(ns, resource, acc.Verbs...)
		d.note("%s: %s: the account may read and write every %s it knows the name of", t.Where, acc.Why, acc.Kind.Kind)
		return nil
	}
	d.access.nameVerbs(ns, resource, acc.Name, acc.Verbs...)
	return nil
}

// held grants what pruning needs on the objects the Instance holds; those
// of a kind the cluster no longer serves are gone already.
func (d *deriver) held(refs []kudov1beta1.ObjectRef) {
	for _, ref := range refs {
		acc := task.Held(ref)
		m, err := d.kinds.mapping(acc.Kind)
		if err != nil {
			continue
		}
		ns := ""
		if m.namespaced {
			ns = acc.Namespace
		}
		d.access.nameVerbs(ns, m.resource, acc.Name, acc.Verbs...)
	}
}

func (d *deriver) namespaceOf(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	return d.in.Namespace
}

// collectRoles records the roles and namespaces the task applies.
func (d *deriver) collectRoles(t *Task) {
	kind, err := task.For(t.Kind)
	if err != nil {
		return
	}
	for _, acc := range kind.Access(&t.Rendered) {
		obj := acc.Object
		if obj == nil {
			continue
		}
		switch obj.GroupVersionKind().GroupKind() {
		case roleKind:
			d.roles.Insert(d.namespaceOf(obj) + "/" + obj.GetName())
		case clusterRoleKind:
			d.roles.Insert("/" + obj.GetName())
		case namespaceKind:
			d.namespaces.Insert(obj.GetName())
		}
	}
}

// escalation grants what RBAC asks of who writes RBAC objects: to apply a
// Role or ClusterRole, the account must hold the rules it grants; to bind
// one, hold its rules (those of the package's roles, held by the first
// rule) or have bind on it.
func (d *deriver) escalation(t *Task, obj *unstructured.Unstructured) error {
	ns := d.namespaceOf(obj)
	describe := fmt.Sprintf("%s %s (%s)", obj.GetKind(), obj.GetName(), t.Where)
	switch obj.GroupVersionKind().GroupKind() {
	case roleKind:
		role := &rbacv1.Role{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
			return fmt.Errorf("%s: %w", describe, err)
		}
		d.access.hold(ns, role.Rules)
		d.note("%s: the account holds the rules it grants, as RBAC requires of who writes it", describe)
	case clusterRoleKind:
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
			return fmt.Errorf("%s: %w", describe, err)
		}
		d.access.hold("", role.Rules)
		d.note("%s: the account holds the rules it grants, in every namespace, as RBAC requires of who writes it", describe)
		if role.AggregationRule != nil {
			d.note("%s has an aggregationRule, which only cluster-admin (or the escalate verb on clusterroles) may write", describe)
		}
	case roleBindingKind, clusterRoleBindingKind:
		binding := &rbacv1.RoleBinding{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, binding); err != nil {
			return fmt.Errorf("%s: %w", describe, err)
		}
		ref := binding.RoleRef
		bound, resource := "/"+ref.Name, clusterRoles
		if ref.Kind == "Role" {
			bound, resource = ns+"/"+ref.Name, roles
		}
		if d.roles.Has(bound) {
			return nil
		}
		if obj.GroupVersionKind().GroupKind() == clusterRoleBindingKind {
			ns = ""
		}
		d.access.name(ns, resource, "bind", ref.Name)
		d.note("%s binds %s %s, which the package does not make: the account may bind it", describe, ref.Kind, ref.Name)
	}
	return nil
}

func (d *deriver) note(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

// mapping is a kind's resource and scope.
type mapping struct {
	resource   schema.GroupResource
	namespaced bool
}

// kinds maps kinds to resources: the built-in kinds and kudo.dev's, those
// a CustomResourceDefinition of the tasks defines, and the cluster's.
type kinds struct {
	defined map[schema.GroupKind]mapping
	cluster Kinds
}

// builtin are Kubernetes' kinds, CustomResourceDefinitions and APIServices
// included, and kudo.dev's, namespaced as the renderer has them offline.
// Their resources are the plurals meta.RESTMapper guesses, which are right
// for every built-in kind (TestBuiltinPlurals).
var builtin = func() map[schema.GroupKind]mapping {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, kudov1beta1.AddToScheme, apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	out := map[schema.GroupKind]mapping{
		// kube-aggregator's scheme is not worth its module.
		{Group: "apiregistration.k8s.io", Kind: "APIService"}: {
			resource: schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}},
	}
	for gvk := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		namespaced, _ := render.BuiltinScope(gvk)
		out[gvk.GroupKind()] = mapping{resource: plural.GroupResource(), namespaced: namespaced}
	}
	return out
}()

// Unreachable is the cluster when none can be asked: every mapping fails
// with Err.
type Unreachable struct{ Err error }

// RESTMapping fails with u.Err.
func (u Unreachable) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, u.Err
}

// errNotFound is the error of a kind found nowhere offline.
var errNotFound = errors.New("not a built-in kind and its CRD is not in the package; run against a cluster that serves it")

func (k *kinds) mapping(gk schema.GroupKind) (mapping, error) {
	if m, ok := builtin[gk]; ok {
		return m, nil
	}
	if m, ok := k.defined[gk]; ok {
		return m, nil
	}
	if k.cluster == nil {
		return mapping{}, errNotFound
	}
	m, err := k.cluster.RESTMapping(gk)
	switch {
	case meta.IsNoMatchError(err):
		return mapping{}, errors.New("not a built-in kind, its CRD is not in the package " +
			"and the cluster does not serve it: install its CRD first")
	case err != nil:
		return mapping{}, fmt.Errorf("%w (the cluster could not tell: %v)", errNotFound, err)
	}
	return mapping{resource: m.Resource.GroupResource(), namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}

// definedKinds are the kinds the CustomResourceDefinitions of the tasks
// define.
func definedKinds(tasks []Task) map[schema.GroupKind]mapping {
	out := map[schema.GroupKind]mapping{}
	for _, t := range tasks {
		for _, obj := range t.Objects {
			if !crd.Is(obj) {
				continue
			}
			defined := crd.DefinedBy(obj)
			if defined.Kind == "" || defined.Plural == "" {
				continue
			}
			out[defined.GroupKind] = mapping{resource: defined.Resource(), namespaced: defined.Namespaced}
		}
	}
	return out
}

// access is what the account does, by scope: a namespace, or "" for the
// cluster.
type access struct {
	scopes map[string]*scopeAccess
}

type scopeAccess struct {
	// verbs on every object of a resource.
	verbs map[schema.GroupResource]sets.Set[string]
	// named are verbs on some objects only: resource → verb → names.
	named map[schema.GroupResource]map[string]sets.Set[string]
	// urls are non-resource URLs → verbs (ClusterRoles' only).
	urls map[string]sets.Set[string]
}

func newAccess() *access { return &access{scopes: map[string]*scopeAccess{}} }

func (a *access) namespace(ns string) *scopeAccess {
	s, ok := a.scopes[ns]
	if !ok {
		s = &scopeAccess{
			verbs: map[schema.GroupResource]sets.Set[string]{},
			named: map[schema.GroupResource]map[string]sets.Set[string]{},
			urls:  map[string]sets.Set[string]{},
		}
		a.scopes[ns] = s
	}
	return s
}

func (a *access) grant(ns string, r schema.GroupResource, verbs ...string) {
	s := a.namespace(ns)
	if s.verbs[r] == nil {
		s.verbs[r] = sets.New[string]()
	}
	s.verbs[r].Insert(verbs...)
}

func (a *access) name(ns string, r schema.GroupResource, verb string, names ...string) {
	if len(names) == 0 {
		return
	}
	s := a.namespace(ns)
	if s.named[r] == nil {
		s.named[r] = map[string]sets.Set[string]{}
	}
	if s.named[r][verb] == nil {
		s.named[r][verb] = sets.New[string]()
	}
	s.named[r][verb].Insert(names...)
}

// nameVerbs grants verbs on the object of that name.
func (a *access) nameVerbs(ns string, r schema.GroupResource, name string, verbs ...string) {
	for _, verb := range verbs {
		a.name(ns, r, verb, name)
	}
}

// hold grants the rules of a role the package makes.
func (a *access) hold(ns string, rules []rbacv1.PolicyRule) {
	for _, rule := range rules {
		for _, url := range rule.NonResourceURLs {
			s := a.namespace(ns)
			if s.urls[url] == nil {
				s.urls[url] = sets.New[string]()
			}
			s.urls[url].Insert(rule.Verbs...)
		}
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				r := schema.GroupResource{Group: group, Resource: resource}
				if len(rule.ResourceNames) == 0 {
					a.grant(ns, r, rule.Verbs...)
					continue
				}
				for _, verb := range rule.Verbs {
					a.name(ns, r, verb, rule.ResourceNames...)
				}
			}
		}
	}
}

// rules are the scope's access as few rules: one per API group, set of
// verbs and resource names, its resources sorted; those on every object of
// their resources first, then those on named objects (verbs the first do not
// grant already), then those on non-resource URLs.
func (a *access) rules(ns string) []rbacv1.PolicyRule {
	s := a.scopes[ns]
	atoms := make([]rbacv1.PolicyRule, 0, len(s.verbs)+len(s.named)+len(s.urls))
	for r, verbs := range s.verbs {
		atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource}, Verbs: ordered(verbs)})
	}
	for r, byVerb := range s.named {
		byNames := map[string]sets.Set[string]{}
		for verb, names := range byVerb {
			if held := s.verbs[r]; held.Has(verb) || held.Has(rbacv1.VerbAll) {
				continue
			}
			key := strings.Join(sets.List(names), ",")
			if byNames[key] == nil {
				byNames[key] = sets.New[string]()
			}
			byNames[key].Insert(verb)
		}
		for names, verbs := range byNames {
			atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource},
				ResourceNames: strings.Split(names, ","), Verbs: ordered(verbs)})
		}
	}
	for url, verbs := range s.urls {
		atoms = append(atoms, rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: ordered(verbs)})
	}
	sort.Slice(atoms, func(i, j int) bool { return ruleKey(atoms[i]) < ruleKey(atoms[j]) })
	var out []rbacv1.PolicyRule
	at := map[string]int{}
	for _, atom := range atoms {
		same := strings.Join([]string{fmt.Sprint(len(atom.NonResourceURLs) > 0), strings.Join(atom.APIGroups, ","),
			strings.Join(atom.ResourceNames, ","), strings.Join(atom.Verbs, ",")}, "\x00")
		if k, ok := at[same]; ok {
			out[k].Resources = append(out[k].Resources, atom.Resources...)
			out[k].NonResourceURLs = append(out[k].NonResourceURLs, atom.NonResourceURLs...)
			continue
		}
		at[same] = len(out)
		out = append(out, atom)
	}
	return out
}

// ruleKey orders rules on resources before rules on named objects before
// rules on non-resource URLs, and each by group, resource and names.
func ruleKey(r rbacv1.PolicyRule) string {
	rank := "0"
	switch {
	case len(r.NonResourceURLs) > 0:
		rank = "2"
	case len(r.ResourceNames) > 0:
		rank = "1"
	}
	return strings.Join([]string{rank, strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","),
		strings.Join(r.NonResourceURLs, ","), strings.Join(r.ResourceNames, ",")}, "\x00")
}

// verbOrder is the order Kubernetes' own roles list verbs in.
var verbOrder = []string{rbacv1.VerbAll, "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
	"bind", "escalate", "impersonate", "use"}

// ordered lists verbs in verbOrder, and the others after them, sorted.
func ordered(verbs sets.Set[string]) []string {
	out := make([]string, 0, verbs.Len())
	for _, v := range verbOrder {
		if verbs.Has(v) {
			out = append(out, v)
		}
	}
	for _, v := range sets.List(verbs) {
		if !slices.Contains(verbOrder, v) {
			out = append(out, v)
		}
	}
	return out
}

// Subject is the service account the grants are for, and the Instance that
// names it.
type Subject struct {
	Namespace, Instance, ServiceAccount string
}

// Names of what Manifests makes: kudo-<instance> in the Instance's
// namespace; kudo-<namespace>-<instance> in other namespaces and for the
// cluster, where Instances of other namespaces may have the same name.
func (s Subject) name(ns string) string {
	if ns == s.Namespace {
		return "kudo-" + s.Instance
	}
	return "kudo-" + s.Namespace + "-" + s.Instance
}

// Manifests are the roles that hold the grants and their bindings to the
// subject: a Role and RoleBinding in the Instance's namespace, then in each
// other namespace, sorted, then a ClusterRole and ClusterRoleBinding if
// cluster-scoped objects need them.
func Manifests(g *Grants, s Subject) []runtime.Object {
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.ServiceAccount, Namespace: s.Namespace}}
	typeMeta := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind}
	}
	var namespaces []string
	if _, ok := g.Namespaces[s.Namespace]; ok {
		namespaces = append(namespaces, s.Namespace)
	}
	for _, ns := range sets.List(sets.KeySet(g.Namespaces)) {
		if ns != s.Namespace {
			namespaces = append(namespaces, ns)
		}
	}
	var out []runtime.Object
	for _, ns := range namespaces {
		om := metav1.ObjectMeta{Name: s.name(ns), Namespace: ns}
		out = append(out,
			&rbacv1.Role{TypeMeta: typeMeta("Role"), ObjectMeta: om, Rules: g.Namespaces[ns]},
			&rbacv1.RoleBinding{TypeMeta: typeMeta("RoleBinding"), ObjectMeta: om, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: om.Name}})
	}
	if len(g.Cluster) > 0 {
		om := metav1.ObjectMeta{Name: s.name("")}
		out = append(out,
			&rbacv1.ClusterRole{TypeMeta: typeMeta("ClusterRole"), ObjectMeta: om, Rules: g.Cluster},
			&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("ClusterRoleBinding"), ObjectMeta: om, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: om.Name}})
	}
	return out
}
