package rbaccmd

import (
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
)

// The verbs the manager needs, as the Instance's service account, on what a
// task does. Every object a task writes has a name known when the plans
// render, so the verbs hold on those names (resourceNames) only: the account
// cannot touch another object of the kind. Server-side apply is a patch,
// authorized as create of that name too when the object is missing. Neither
// list nor watch is granted, as a name cannot restrict them: the manager
// reads through its own cache.
var (
	// applyVerbs, on what Apply and Toggle tasks apply (whatever the
	// Toggle's value: a change of it needs no new grant), the files of Pipe
	// tasks and the Instances of KudoOperator tasks: pruning, the cleanup
	// plan and uninstall delete; get and update let the account's other
	// users (kubectl, tools) read and edit what it made.
	applyVerbs = []string{"get", "create", "update", "patch", "delete"}
	// deleteVerbs, on what Delete tasks delete, and on what the Instance
	// holds now, which pruning deletes when new parameters rename it.
	deleteVerbs = []string{"get", "delete"}
	// pipePodVerbs, on a Pipe task's pod, server-side applied then deleted.
	pipePodVerbs = []string{"get", "create", "patch", "delete"}
	// execVerbs, on pods/exec: the files are copied out of the Pipe pod
	// with exec, as kubectl cp does, as the account; exec over WebSocket
	// asks for get.
	execVerbs = []string{"create", "get"}
)

var (
	secrets            = schema.GroupResource{Resource: "secrets"}
	pods               = schema.GroupResource{Resource: "pods"}
	podsExec           = schema.GroupResource{Resource: "pods/exec"}
	instances          = schema.GroupResource{Group: kudov1beta1.GroupVersion.Group, Resource: "instances"}
	instanceFinalizers = schema.GroupResource{Group: kudov1beta1.GroupVersion.Group, Resource: "instances/finalizers"}
	roles              = schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}
	clusterRoles       = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}

	namespaceKind          = schema.GroupKind{Kind: "Namespace"}
	roleKind               = schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}
	clusterRoleKind        = schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}
	roleBindingKind        = schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}
	clusterRoleBindingKind = schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}
)

// Task is what one task of a plan does, rendered.
type Task struct {
	// Where names the task: its plan, phase, step and name, and the
	// Instance when it is a child's.
	Where string
	Kind  kudov1beta1.TaskKind
	// Template is the one template Objects come from, if known.
	Template string
	Objects  []*unstructured.Unstructured
	// Pipes are the objects, ConfigMaps or Secrets, a Pipe task stores its
	// files in.
	Pipes []Pipe
	// Child is the Instance a KudoOperator task makes; ChildSecret says
	// that the task applies a Secret of the child's sensitive values.
	Child       string
	ChildSecret bool
}

// Pipe is an object a Pipe task stores a file in.
type Pipe struct {
	Kind, Name string
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
	switch t.Kind {
	case kudov1beta1.ApplyTaskKind, kudov1beta1.ToggleTaskKind:
		for _, obj := range t.Objects {
			if err := d.object(t, obj, applyVerbs); err != nil {
				return err
			}
			if err := d.escalation(t, obj); err != nil {
				return err
			}
		}
	case kudov1beta1.DeleteTaskKind:
		for _, obj := range t.Objects {
			if err := d.object(t, obj, deleteVerbs); err != nil {
				return err
			}
		}
	case kudov1beta1.PipeTaskKind:
		for _, pod := range t.Objects {
			ns := d.namespaceOf(pod)
			d.access.nameVerbs(ns, pods, pod.GetName(), pipePodVerbs...)
			d.access.nameVerbs(ns, podsExec, pod.GetName(), execVerbs...)
		}
		for _, p := range t.Pipes {
			m, err := d.kinds.mapping(schema.GroupKind{Kind: p.Kind})
			if err != nil {
				return fmt.Errorf("%s: pipe kind %s: %w", t.Where, p.Kind, err)
			}
			d.access.nameVerbs(d.in.Namespace, m.resource, p.Name, applyVerbs...)
		}
	case kudov1beta1.KudoOperatorTaskKind:
		// The child's OperatorVersion and the parents the cycle check
		// walks are read from the manager's cache.
		d.access.nameVerbs(d.in.Namespace, instances, t.Child, applyVerbs...)
		if t.ChildSecret {
			// Applied as the parent, read as the child: the same account.
			// Its name is the plan run's, unknown until it runs.
			d.access.grant(d.in.Namespace, secrets, applyVerbs...)
			d.note("%s: the Secret of the child's sensitive values is named after the plan run: "+
				"the account may read and write every Secret it knows the name of", t.Where)
		}
	}
	return nil
}

// object grants verbs on obj's resource, where it lives.
func (d *deriver) object(t *Task, obj *unstructured.Unstructured, verbs []string) error {
	gvk := obj.GroupVersionKind()
	m, err := d.kinds.mapping(gvk.GroupKind())
	if err != nil {
		kind := gvk.Kind
		if gvk.Group != "" {
			kind += "." + gvk.Group
		}
		if t.Template != "" {
			kind += " (template " + t.Template + ")"
		}
		return fmt.Errorf("%s: kind %s: %w", t.Where, kind, err)
	}
	ns := ""
	if m.namespaced {
		ns = d.namespaceOf(obj)
	}
	d.access.nameVerbs(ns, m.resource, obj.GetName(), verbs...)
	return nil
}

// held grants what pruning needs on the objects the Instance holds; those
// of a kind the cluster no longer serves are gone already.
func (d *deriver) held(refs []kudov1beta1.ObjectRef) {
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		m, err := d.kinds.mapping(gv.WithKind(ref.Kind).GroupKind())
		if err != nil {
			continue
		}
		ns := ""
		if m.namespaced {
			ns = ref.Namespace
		}
		d.access.nameVerbs(ns, m.resource, ref.Name, deleteVerbs...)
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
	if t.Kind != kudov1beta1.ApplyTaskKind && t.Kind != kudov1beta1.ToggleTaskKind {
		return
	}
	for _, obj := range t.Objects {
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
