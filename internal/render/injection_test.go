package render

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	pod       = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: busybox\n"
	secret    = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
	binding   = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: evil\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: User, name: me}]\n"
	// stays is the end of every refusal.
	stays = ": a parameter value must stay inside the YAML value the template puts it in"
)

// TestInjectionRefused: values that are YAML beyond their own YAML value are
// refused, the error naming the template, the parameter and what changes.
func TestInjectionRefused(t *testing.T) {
	tests := []struct {
		name, text string
		params     map[string]any
		want       string
	}{
		{name: "a newline and --- add a ClusterRoleBinding",
			text: configMap + "data:\n  a: {{ .Params.X }}\n", params: map[string]any{"X": "x\n---\n" + binding},
			want: "parameter X's value makes 2 objects where the template makes 1"},
		{name: "a namespace under metadata",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "c\n  namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "the annotation that moves an object to another namespace",
			text:   configMap + "  annotations:\n    note: {{ .Params.X }}\n",
			params: map[string]any{"X": "x\n    kudo.dev/namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata.annotations of object 1 (ConfigMap)"},
		{name: "a key at the top",
			text:   "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "sa\nautomountServiceAccountToken: true"},
			want:   "parameter X's value adds a key at the top of object 1 (ServiceAccount)"},
		{name: "a list of the template made a string",
			text:   configMap + "  finalizers: [kudo.dev/keep]\n  labels: {{ .Params.X }}\n",
			params: map[string]any{"X": "{}\n  finalizers: none"},
			want:   "parameter X's value changes the type of metadata.finalizers in object 1 (ConfigMap)"},
		{name: "out of a flow mapping",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Params.X }}}\n",
			params: map[string]any{"X": "c, namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "out of a flow sequence",
			text: pod + "    args: [sh, {{ .Params.X }}]\n", params: map[string]any{"X": "-c, rm -rf /"},
			want: "parameter X's value changes the number of items of spec.containers[0].args in object 1 (Pod)"},
		{name: "out of a double-quoted scalar, commenting out the template's item",
			text: pod + "    args: [sh, -c, \"{{ .Params.X }}\", --safe]\n", params: map[string]any{"X": `x", --evil] #`},
			want: "parameter X's value changes spec.containers[0].args[3] of object 1 (Pod)"},
		{name: "out of a double-quoted scalar in block style",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"{{ .Params.X }}\"\n",
			params: map[string]any{"X": "c\"\n  namespace: \"kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "out of squote, which does not escape '",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X | squote }}\n",
			params: map[string]any{"X": "c'\n  namespace: 'kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "an anchor and an alias",
			text: configMap + "data:\n  a: {{ .Params.X }}\n", params: map[string]any{"X": "&v x\n  b: *v"},
			want: "parameter X's value adds a key to data of object 1 (ConfigMap)"},
		{name: "an anchor that takes over the template's alias",
			text: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: &labels {app: d}\n" +
				"spec:\n  replicas: {{ .Params.X }}\n  selector: {matchLabels: *labels}\n",
			params: map[string]any{"X": "&labels {app: evil}"},
			want:   "parameter X's value changes spec.selector.matchLabels.app of object 1 (Deployment)"},
		{name: "a merge key",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "c\n  <<: {namespace: kube-system}"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "a !! tag on a key that overrides the template's",
			text:   configMap + "data:\n  b: safe\n  a: {{ .Params.X }}\n",
			params: map[string]any{"X": "x\n  b: !!binary ZXZpbA=="},
			want:   "parameter X's value changes data.b of object 1 (ConfigMap)"},
		{name: "... ends the document early",
			text:   configMap + "  labels:\n    v: {{ .Params.X }}\ndata:\n  safe: \"true\"\n",
			params: map[string]any{"X": "x\n..."},
			want:   "parameter X's value removes data from object 1 (ConfigMap)"},
		{name: "Windows newlines",
			text: configMap + "data:\n  a: {{ .Params.X }}\n", params: map[string]any{"X": "x\r\n---\r\n" + strings.ReplaceAll(secret, "\n", "\r\n")},
			want: "parameter X's value makes 2 objects where the template makes 1"},
		{name: "a carriage return alone",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "c\r  namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "a Unicode line separator",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "c\u2028  namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "a next line (NEL)",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.X }}\n",
			params: map[string]any{"X": "c\u0085  namespace: kube-system"},
			want:   "parameter X's value adds a key to metadata of object 1 (ConfigMap)"},
		{name: "out of a block scalar the template does not indent",
			text: configMap + "data:\n  config: |\n{{ .Params.X }}\n", params: map[string]any{"X": "namespace: kube-system"},
			want: "parameter X's value cannot be checked: with plain words for the values, the template fails: t.yaml: document 1 is not valid YAML"},
		{name: "a value that breaks the YAML",
			text: configMap + "data:\n  a: {{ .Params.X }}\n", params: map[string]any{"X": "a: b"},
			want: "parameter X's value breaks the template's YAML: document 1 is not valid YAML: line 6: mapping values are not allowed in this context"},
		{name: "an item of an array",
			text:   configMap + "data:\n{{ range $i, $v := .Params.LIST }}  k{{ $i }}: {{ $v }}\n{{ end }}",
			params: map[string]any{"LIST": []any{"a", "b\n---\n" + secret}},
			want:   "parameter LIST's value makes 2 objects where the template makes 1"},
		{name: "a key of a map",
			text:   configMap + "  labels:\n{{ range $k, $v := .Params.LABELS }}    {{ $k }}: {{ $v }}\n{{ end }}",
			params: map[string]any{"LABELS": map[string]any{"a": "1", "b: \"2\"\n  namespace": "kube-system"}},
			want:   "parameter LABELS's value removes metadata.labels.<LABELS> from object 1 (ConfigMap)"},
		{name: "the culprit among several",
			text:   configMap + "data:\n  config: |\n{{ .Params.CONFIG | indent 4 }}\n  b: {{ .Params.B | quote }}\n  x: {{ .Params.X }}\n",
			params: map[string]any{"CONFIG": "a: 1\n---\nb: 2", "B": "it's: \"b\"", "X": "x\n  yy: z"},
			want:   "parameter X's value adds a key to data of object 1 (ConfigMap)"},
		{name: "several together, which alone change nothing",
			text:   configMap + "data:\n  a: {{ .Params.A }}\n  b: {{ .Params.B }}\n",
			params: map[string]any{"A": "x\n  c: \"1\"", "B": "y\n  c: \"1\""},
			want:   "parameter A's value, together with B's, adds a key to data of object 1 (ConfigMap)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := DefaultLimits.TemplateObjects("t.yaml", tt.text, &Variables{Params: tt.params, Name: "i"})
			if err == nil {
				t.Fatalf("not refused: %v", objects(objs))
			}
			if !strings.HasPrefix(err.Error(), "t.yaml: "+tt.want) || !strings.HasSuffix(err.Error(), stays) {
				t.Errorf("error = %v\nwant t.yaml: %s...%s", err, tt.want, stays)
			}
			// Values may be sensitive: errors show where, not what.
			for _, leak := range []string{"kube-system", "evil", "ZXZpbA"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error = %v, shows %q of a value", err, leak)
				}
			}
		})
	}
}

// TestValuesStayInside: values that stay in the YAML value the template puts
// them in render as before, however much YAML they hold.
func TestValuesStayInside(t *testing.T) {
	const config = "a: 1\n---\n" + binding + "...\nb: [x, {y: z}] # &a *a !!str"
	tests := []struct {
		name, text string
		params     map[string]any
		want       string // the objects, as objects() shows them
	}{
		{name: "a configuration file indented into a block scalar",
			text: configMap + "data:\n  config.yaml: |\n{{ .Params.CONFIG | indent 4 }}\n", params: map[string]any{"CONFIG": config},
			want: "ConfigMap/c data.config.yaml=" + config + "\n"},
		{name: "nindent",
			text: configMap + "data:\n  config.yaml: |-{{ .Params.CONFIG | nindent 4 }}\n", params: map[string]any{"CONFIG": config},
			want: "ConfigMap/c data.config.yaml=" + config},
		{name: "quote",
			text: configMap + "data:\n  a: {{ .Params.X | quote }}\n", params: map[string]any{"X": "a\"b\n---\nc: {d}\\"},
			want: "ConfigMap/c data.a=a\"b\n---\nc: {d}\\"},
		{name: "squote",
			text: configMap + "data:\n  a: {{ .Params.X | squote }}\n", params: map[string]any{"X": "a: b, [c] #d"},
			want: "ConfigMap/c data.a=a: b, [c] #d"},
		{name: "b64enc",
			text: secret + "data:\n  password: {{ .Params.PASSWORD | b64enc }}\n", params: map[string]any{"PASSWORD": "p@ss: w0rd\n---\n#!'\""},
			want: "Secret/s data.password=cEBzczogdzByZAotLS0KIyEnIg=="},
		{name: "toYaml of a string",
			text: configMap + "data:\n  a: {{ toYaml .Params.X }}\n", params: map[string]any{"X": "a: b # c"},
			want: "ConfigMap/c data.a=a: b # c"},
		{name: "toYaml of a multi-line string, indented",
			text: configMap + "data:\n  a: {{ toYaml .Params.X | nindent 4 }}\n", params: map[string]any{"X": "l1\nl2: x"},
			want: "ConfigMap/c data.a=l1\nl2: x"},
		{name: "a name and a key built from values",
			text:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-{{ .Params.SUFFIX }}\ndata:\n  {{ .Params.KEY }}: v\n",
			params: map[string]any{"SUFFIX": "a,b", "KEY": "my key, 1"},
			want:   "ConfigMap/i-a,b data.my key, 1=v"},
		{name: ": inside a quoted scalar",
			text: configMap + "data:\n  a: \"{{ .Params.X }}\"\n", params: map[string]any{"X": "key: value"},
			want: "ConfigMap/c data.a=key: value"},
		{name: "a quoted item of a flow sequence",
			text: configMap + "data:\n  a: {{ list \"sh\" \"-c\" .Params.CMD | toJson | quote }}\n", params: map[string]any{"CMD": "echo a, b; ls [x]"},
			want: `ConfigMap/c data.a=["sh","-c","echo a, b; ls [x]"]`},
		{name: "control flow on plain values beside a value that is not plain",
			text: configMap + "data:\n  a: {{ .Params.X | quote }}\n{{ if eq .Params.ENABLED \"true\" }}---\n" + secret +
				"{{ end }}{{ range untilStep 0 (int .Params.COUNT) 1 }}---\n" + configMap + "  namespace: n{{ . }}\n{{ end }}",
			params: map[string]any{"X": "a, b", "ENABLED": "true", "COUNT": "2"},
			want:   "ConfigMap/c data.a=a, b\nSecret/s\nConfigMap/c\nConfigMap/c"},
		{name: "YAML of its own in its own value",
			text: configMap + "data:\n  a: x\nextra:{{ .Params.RESOURCES | nindent 2 }}\n", params: map[string]any{"RESOURCES": "limits:\n  cpu: 1"},
			want: "ConfigMap/c data.a=x"},
		{name: "items of an array",
			text:   configMap + "data:\n{{ range $i, $v := .Params.LIST }}  k{{ $i }}: {{ $v | quote }}\n{{ end }}",
			params: map[string]any{"LIST": []any{"a, b", "c: d"}},
			want:   "ConfigMap/c data.k0=a, b data.k1=c: d"},
		{name: "a value the template does not print",
			text: configMap, params: map[string]any{"UNUSED": "x\n---\n" + binding},
			want: "ConfigMap/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := DefaultLimits.TemplateObjects("t.yaml", tt.text, &Variables{Params: tt.params, Name: "i"})
			if err != nil {
				t.Fatal(err)
			}
			if got := objects(objs); got != tt.want {
				t.Errorf("objects:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// objects shows each object as kind/name and its data, sorted by key.
func objects(objs []*unstructured.Unstructured) string {
	lines := make([]string, 0, len(objs))
	for _, obj := range objs {
		line := obj.GetKind() + "/" + obj.GetName()
		data, _, _ := unstructured.NestedMap(obj.Object, "data")
		for _, k := range sortedKeys(data) {
			line += " data." + k + "=" + data[k].(string)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestTaskRefusesInjection: Task, which plans, previews and package verify
// render through, refuses too.
func TestTaskRefusesInjection(t *testing.T) {
	_, err := Task(&Request{
		Templates: map[string]string{"cm.yaml": configMap + "data:\n  a: {{ .Params.X }}\n"}, Resources: []string{"cm.yaml"},
		Variables: Variables{Params: map[string]any{"X": "x\n---\n" + binding}},
		Served:    func(schema.GroupVersionKind) bool { return true }, Scope: BuiltinScope,
	})
	if want := "cm.yaml: parameter X's value makes 2 objects where the template makes 1" + stays; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestPlain(t *testing.T) {
	for _, s := range []string{
		"", "true", "3", "-1", "-Xmx1g -Dx=y", "nginx:1.2", "http://x/y?a=1&b=2", "a-b_c", "a b", "a#b", "/var/lib",
		".5", "$HOME", "(x)", "+1", "é", "100%", "a:b", "a=b;c", "x*y", "a!", "a|b", "a>b",
	} {
		if !plain(s) {
			t.Errorf("plain(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"a\nb", "a\rb", "a\tb", "a\u0085b", "a\u2028b", "a\u2029b", "\ufeffa",
		"a: b", "a:", "a #b", " a", "a ", "- a", "-", "--a", "---", "...", "..a", "? a", "?",
		"{a}", "[a]", "a,b", "a}", "&a", "*a", "!!str a", "!a", "|", ">", "%YAML", "@a", "`a", "#a", "'a", "a'", "\"a", "a\"", `a\`,
		"<<", "=", "~",
	} {
		if plain(s) {
			t.Errorf("plain(%q) = true, want false", s)
		}
	}
}

// TestAParameterFileIsGuardedAsATemplate: a KudoOperator parameter file is
// rendered with the parent's values; one of them may fill its own child
// parameter, not set another, nor expand.
func TestAParameterFileIsGuardedAsATemplate(t *testing.T) {
	const file = "REPLICAS: \"3\"\nZK_URI: {{ .Params.URI }}\nCONFIG: |\n{{ .Params.CONFIG | indent 2 }}\n"
	for _, tt := range []struct {
		name, uri, config string
		want              map[string]any
		wantErr           string
	}{
		{name: "plain values", uri: "zk-0:2181", config: "a: 1\nb: 2",
			want: map[string]any{"ZK_URI": "zk-0:2181", "REPLICAS": "3", "CONFIG": "a: 1\nb: 2\n"}},
		{name: "a value setting another parameter", uri: "zk\nREPLICAS: \"0\"", config: "a",
			wantErr: "params.yaml: parameter URI's value"},
		{name: "a value adding a parameter", uri: "zk\nIMAGE: evil", config: "a",
			wantErr: "params.yaml: parameter URI's value"},
		{name: "an alias bomb", uri: "&a " + strings.Repeat("x", 40000) + "\nB: [" + strings.Repeat("*a,", 9999) + "*a]", config: "a",
			wantErr: "its aliases (*name) expand it to more than 4 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := DefaultLimits.ParameterFile("params.yaml", file, &Variables{Params: map[string]any{"URI": tt.uri, "CONFIG": tt.config}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParameterFile = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
