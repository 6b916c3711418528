package typedapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestNamesDeriveFromTheOperatorsName(t *testing.T) {
	for _, tc := range []struct {
		operator, kind, plural string
	}{
		{"zookeeper", "Zookeeper", "zookeepers"},
		{"kafka-connect", "KafkaConnect", "kafkaconnects"},
		{"confluent-rest-proxy", "ConfluentRestProxy", "confluentrestproxies"},
		{"redis", "Redis", "redises"},
		{"first-operator", "FirstOperator", "firstoperators"},
		{"cowsay", "Cowsay", "cowsays"},
		{"my.search", "MySearch", "mysearches"},
		{"3scale", "Kudo3scale", "kudo3scales"},
		{"rabbitmq", "Rabbitmq", "rabbitmqs"},
	} {
		n, err := NamesOf(tc.operator, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.operator, err)
		}
		want := Names{Group: DefaultGroup, Version: DefaultVersion, Kind: tc.kind, Plural: tc.plural, Singular: strings.ToLower(tc.kind)}
		if n.Group != want.Group || n.Version != want.Version || n.Kind != want.Kind || n.Plural != want.Plural ||
			n.Singular != want.Singular || n.ShortNames != nil {
			t.Errorf("%s: got %+v, want %+v", tc.operator, n, want)
		}
		if n.CRDName() != tc.plural+"."+DefaultGroup {
			t.Errorf("%s: CRD name %s", tc.operator, n.CRDName())
		}
	}
}

func TestNamesAPackageGivesTakeTheirPlace(t *testing.T) {
	n, err := NamesOf("zookeeper", &kudov1beta1.TypedAPI{
		Group: "zk.example.com", Version: "v2beta1", Kind: "ZooKeeperEnsemble", Plural: "ensembles", ShortNames: []string{"zke"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.CRDName() != "ensembles.zk.example.com" || n.Singular != "zookeeperensemble" || n.Version != "v2beta1" || n.ShortNames[0] != "zke" {
		t.Errorf("got %+v", n)
	}
	n, err = NamesOf("zookeeper", &kudov1beta1.TypedAPI{Kind: "Ensemble"})
	if err != nil || n.Plural != "ensembles" || n.Group != DefaultGroup {
		t.Errorf("a kind alone: %+v, %v", n, err)
	}
}

func TestNamesTheAPIServerWouldRefuseAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		custom kudov1beta1.TypedAPI
		want   string
	}{
		{"group without a dot", kudov1beta1.TypedAPI{Group: "zookeeper"}, `typedAPI.group "zookeeper" is not a DNS subdomain`},
		{"kudo-ng's own group", kudov1beta1.TypedAPI{Group: "kudo.dev"}, `typedAPI.group "kudo.dev" is reserved`},
		{"a Kubernetes group", kudov1beta1.TypedAPI{Group: "apps.k8s.io"}, `typedAPI.group "apps.k8s.io" is reserved`},
		{"version", kudov1beta1.TypedAPI{Version: "1.0"}, `typedAPI.version "1.0" is not a Kubernetes API version`},
		{"kind", kudov1beta1.TypedAPI{Kind: "zoo_keeper"}, `typedAPI.kind "zoo_keeper" is not UpperCamelCase`},
		{"plural", kudov1beta1.TypedAPI{Plural: "Zoo"}, `typedAPI.plural "Zoo" is not lower-case letters`},
		{"short name", kudov1beta1.TypedAPI{ShortNames: []string{"z_k"}}, `typedAPI.shortNames "z_k" is not lower-case letters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NamesOf("zookeeper", &tc.custom)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFieldOfKeepsPlainNamesAndEscapesOthers(t *testing.T) {
	for param, field := range map[string]string{
		"NODE_COUNT":      "NODE_COUNT",
		"nodeCount":       "nodeCount",
		"_private":        "_private",
		"log.level":       "log_level",
		"zk-port":         "zk_port",
		"2FA":             "_2FA",
		"a b/c":           "a_b_c",
		"operatorVersion": "operatorVersion_",
		"planExecution":   "planExecution_",
		"":                "_",
	} {
		if got := FieldOf(param); got != field {
			t.Errorf("FieldOf(%q) = %q, want %q", param, got, field)
		}
	}
}

func TestFieldsRefusesTwoParametersOfOneField(t *testing.T) {
	_, err := Fields([]kudov1beta1.Parameter{{Name: "zk-port"}, {Name: "zk.port"}})
	want := `parameters "zk-port" and "zk.port" would both be the field "zk_port" of the typed API`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestNewestIsBySemanticVersion(t *testing.T) {
	ov := func(name, version string) kudov1beta1.OperatorVersion {
		v := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: version}}
		v.Name = name
		return v
	}
	newest, older := Newest([]kudov1beta1.OperatorVersion{ov("a", "0.10.0"), ov("b", "0.9.1"), ov("c", "not-semver")})
	if newest.Name != "a" || len(older) != 2 || older[0].Name != "c" || older[1].Name != "b" {
		t.Errorf("newest %s, older %v", newest.Name, older)
	}
	if newest, older := Newest(nil); newest != nil || older != nil {
		t.Errorf("of none: %v %v", newest, older)
	}
}

func TestFieldsRefusesParametersWhoseEscapedNamesMeet(t *testing.T) {
	for _, tc := range []struct {
		a, b, field string
	}{
		{"operatorVersion", "operatorVersion_", "operatorVersion_"},
		{"2FA", "_2FA", "_2FA"},
		{"a b", "a_b", "a_b"},
		{"secretParameters", "secretParameters_", "secretParameters_"},
	} {
		_, err := Fields([]kudov1beta1.Parameter{{Name: tc.a}, {Name: tc.b}})
		want := fmt.Sprintf("parameters %q and %q would both be the field %q of the typed API: rename one", tc.a, tc.b, tc.field)
		if err == nil || err.Error() != want {
			t.Errorf("Fields(%s, %s) = %v, want %q", tc.a, tc.b, err, want)
		}
	}
	fields, err := Fields([]kudov1beta1.Parameter{{Name: "in"}, {Name: "log.level"}, {Name: "serviceAccountName"}, {Name: "kubeConfig"}})
	want := map[string]string{"in": "in", "log.level": "log_level", "serviceAccountName": "serviceAccountName_", "kubeConfig": "kubeConfig_"}
	if err != nil || !maps.Equal(fields, want) {
		t.Errorf("Fields = %v, %v; want %v", fields, err, want)
	}
}

// TestNewestIsDecidedWhateverTheVersionsSay: the schema types the newest
// version's parameters, so two managers, or two passes, must agree on it
// whatever order the API server lists versions in.
func TestNewestIsDecidedWhateverTheVersionsSay(t *testing.T) {
	ov := func(namespace, name, version string) kudov1beta1.OperatorVersion {
		v := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: version}}
		v.Namespace, v.Name = namespace, name
		return v
	}
	for _, tc := range []struct {
		name     string
		versions []kudov1beta1.OperatorVersion
		// want is the newest, then the older in order, as namespace/name.
		want []string
	}{
		{"one version, none older", []kudov1beta1.OperatorVersion{ov("a", "zk-1", "1.0.0")}, []string{"a/zk-1"}},
		{"a release after its release candidate", []kudov1beta1.OperatorVersion{ov("a", "zk-1", "1.0.0"), ov("a", "zk-1rc", "1.0.0-rc.1")},
			[]string{"a/zk-1", "a/zk-1rc"}},
		{"a v prefix and a short version are semantic", []kudov1beta1.OperatorVersion{ov("a", "two", "v2"), ov("a", "one", "1.9.9")},
			[]string{"a/two", "a/one"}},
		{"one version under two names: the greater name", []kudov1beta1.OperatorVersion{ov("a", "zk-b", "1.0.0"), ov("a", "zk-a", "1.0.0")},
			[]string{"a/zk-b", "a/zk-a"}},
		{"build metadata does not order", []kudov1beta1.OperatorVersion{ov("a", "zk-b", "1.0.0+1"), ov("a", "zk-a", "1.0.0+2")},
			[]string{"a/zk-b", "a/zk-a"}},
		{"one name in two namespaces: the greater namespace", []kudov1beta1.OperatorVersion{ov("b", "zk", "1.0.0"), ov("a", "zk", "1.0.0")},
			[]string{"b/zk", "a/zk"}},
		{"versions that are not semantic, by version", []kudov1beta1.OperatorVersion{ov("a", "x", "latest"), ov("a", "y", "dev")},
			[]string{"a/x", "a/y"}},
		{"a semantic version over any other", []kudov1beta1.OperatorVersion{ov("a", "x", "latest"), ov("a", "y", "0.0.1")},
			[]string{"a/y", "a/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reversed := slices.Clone(tc.versions)
			slices.Reverse(reversed)
			for _, versions := range [][]kudov1beta1.OperatorVersion{tc.versions, reversed} {
				listed := slices.Clone(versions)
				newest, older := Newest(versions)
				got := []string{newest.Namespace + "/" + newest.Name}
				for _, o := range older {
					got = append(got, o.Namespace+"/"+o.Name)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("Newest = %v, want %v", got, tc.want)
				}
				if !slices.EqualFunc(versions, listed, func(a, b kudov1beta1.OperatorVersion) bool { return a.Name == b.Name }) {
					t.Error("Newest reordered the caller's versions")
				}
			}
		})
	}
}

func TestNamesAreThoseOfTheTypedObjects(t *testing.T) {
	n, err := NamesOf("kafka-connect", &kudov1beta1.TypedAPI{Group: "kafka.example.com", Version: "v1beta2"})
	if err != nil {
		t.Fatal(err)
	}
	if gvk := n.GroupVersionKind(); gvk.String() != "kafka.example.com/v1beta2, Kind=KafkaConnect" {
		t.Errorf("GroupVersionKind = %s", gvk)
	}
	if gvr := n.GroupVersionResource(); gvr.String() != "kafka.example.com/v1beta2, Resource=kafkaconnects" {
		t.Errorf("GroupVersionResource = %s", gvr)
	}
}
