// Package typedapi serves each package as a kind of its own (KUDO's KEP-2,
// "Dynamic Instances"): the names of the kind, the CustomResourceDefinition
// made from the package's parameters, and the conversion between an object
// of the kind and the Instance that runs it. Pure: the controllers and the
// CLI gather and apply.
package typedapi

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const (
	// DefaultGroup is the group of the kinds packages do not name a group
	// for: one group, which the manager's role covers in a single rule.
	DefaultGroup = "packages.kudo.dev"
	// DefaultVersion is the version served when the package names none.
	DefaultVersion = "v1"
	// Category lists every typed kind in `kubectl get kudo`.
	Category = "kudo"
)

// Names are the names of an Operator's typed API.
type Names struct {
	Group, Version, Kind, Plural, Singular string
	ShortNames                             []string
}

// CRDName is the name of the CustomResourceDefinition: plural.group.
func (n Names) CRDName() string { return n.Plural + "." + n.Group }

// GroupVersionKind of the typed objects.
func (n Names) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: n.Group, Version: n.Version, Kind: n.Kind}
}

// GroupVersionResource of the typed objects.
func (n Names) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: n.Group, Version: n.Version, Resource: n.Plural}
}

var (
	versionName = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	kindName    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	// reservedGroups are the groups no package may serve a kind in: kudo-ng's
	// own, and those the API server keeps for Kubernetes.
	reservedGroups = []string{"kudo.dev", "k8s.io", "kubernetes.io", "x-k8s.io"}
)

// NamesOf derives the names of the Operator's typed API, each field the
// package names (typedAPI in operator.yaml) taking its place: the kind is
// the Operator's name in UpperCamelCase, its words being what dashes, dots
// and underscores separate ("kafka-connect" → KafkaConnect), prefixed with
// "Kudo" if it begins with a digit; the plural is the kind in lower case
// made plural as English does ("redis" → redises, "proxy" → proxies); the
// group is DefaultGroup, the version DefaultVersion, and there are no short
// names (a short name may hide another kind's).
func NamesOf(operator string, custom *kudov1beta1.TypedAPI) (Names, error) {
	n := Names{Group: DefaultGroup, Version: DefaultVersion, Kind: kindOf(operator)}
	if custom != nil {
		n.Group = cmpOr(custom.Group, n.Group)
		n.Version = cmpOr(custom.Version, n.Version)
		n.Kind = cmpOr(custom.Kind, n.Kind)
		n.ShortNames = custom.ShortNames
	}
	n.Singular = strings.ToLower(n.Kind)
	n.Plural = pluralOf(n.Singular)
	if custom != nil && custom.Plural != "" {
		n.Plural = custom.Plural
	}
	return n, n.validate()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

const labelRule = "lower-case letters, digits and '-', beginning with a letter (at most 63)"

// validate refuses names the API server would, naming the field of
// operator.yaml's typedAPI that holds each.
func (n Names) validate() error {
	var problems []string
	if errs := validation.IsDNS1123Subdomain(n.Group); len(errs) > 0 || !strings.Contains(n.Group, ".") {
		problems = append(problems, fmt.Sprintf("typedAPI.group %q is not a DNS subdomain with a dot", n.Group))
	}
	for _, reserved := range reservedGroups {
		if n.Group != DefaultGroup && (n.Group == reserved || strings.HasSuffix(n.Group, "."+reserved)) {
			problems = append(problems, fmt.Sprintf("typedAPI.group %q is reserved (%s)", n.Group, reserved))
		}
	}
	if !versionName.MatchString(n.Version) {
		problems = append(problems, fmt.Sprintf("typedAPI.version %q is not a Kubernetes API version (v1, v2beta1, ...)", n.Version))
	}
	if !kindName.MatchString(n.Kind) || len(n.Kind) > validation.DNS1035LabelMaxLength {
		problems = append(problems, fmt.Sprintf("typedAPI.kind %q is not UpperCamelCase letters and digits (at most 63)", n.Kind))
	} else if len(validation.IsDNS1035Label(n.Plural)) > 0 {
		problems = append(problems, fmt.Sprintf("typedAPI.plural %q is not %s", n.Plural, labelRule))
	}
	for _, short := range n.ShortNames {
		if len(validation.IsDNS1035Label(short)) > 0 {
			problems = append(problems, fmt.Sprintf("typedAPI.shortNames %q is not %s", short, labelRule))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%s", strings.Join(problems, ", "))
	}
	return nil
}

func kindOf(operator string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(operator, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	kind := b.String()
	if kind != "" && kind[0] >= '0' && kind[0] <= '9' {
		kind = "Kudo" + kind
	}
	return kind
}

func pluralOf(singular string) string {
	switch {
	case strings.HasSuffix(singular, "s"), strings.HasSuffix(singular, "x"), strings.HasSuffix(singular, "z"),
		strings.HasSuffix(singular, "ch"), strings.HasSuffix(singular, "sh"):
		return singular + "es"
	case len(singular) > 1 && strings.HasSuffix(singular, "y") && !strings.ContainsAny(singular[len(singular)-2:len(singular)-1], "aeiou"):
		return singular[:len(singular)-1] + "ies"
	}
	return singular + "s"
}

// Newest splits the OperatorVersions of one Operator into the newest, by
// the semantic version of spec.version (the one whose parameters the
// schema types), and the others, whose parameters' fields it keeps. A
// version that is not semantic sorts before those that are.
func Newest(versions []kudov1beta1.OperatorVersion) (newest *kudov1beta1.OperatorVersion, older []kudov1beta1.OperatorVersion) {
	if len(versions) == 0 {
		return nil, nil
	}
	sorted := bySemver(versions)
	return &sorted[len(sorted)-1], sorted[:len(sorted)-1]
}

// bySemver is a copy of versions, oldest first by semantic version; those
// without one before all others.
func bySemver(versions []kudov1beta1.OperatorVersion) []kudov1beta1.OperatorVersion {
	sorted := slices.Clone(versions)
	slices.SortStableFunc(sorted, func(a, b kudov1beta1.OperatorVersion) int {
		va, errA := semver.NewVersion(a.Spec.Version)
		vb, errB := semver.NewVersion(b.Spec.Version)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a.Spec.Version+a.Name, b.Spec.Version+b.Name)
		case errA != nil:
			return -1
		case errB != nil:
			return 1
		}
		return cmp.Or(va.Compare(vb), strings.Compare(a.Name, b.Name), strings.Compare(a.Namespace, b.Namespace))
	})
	return sorted
}
