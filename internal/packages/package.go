// Package packages reads, checks and writes KUDO operator packages: a
// directory or gzip tarball with operator.yaml, params.yaml and templates/,
// and repository indexes of such tarballs. It needs no cluster.
package packages

import (
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// APIVersion is the apiVersion of operator.yaml and params.yaml.
const APIVersion = "kudo.dev/v1beta1"

// File names of a package.
const (
	OperatorFileName = "operator.yaml"
	ParamsFileName   = "params.yaml"
	TemplatesDir     = "templates/"
	// ChartsDir (kudo-ng) holds the Helm charts of the package's Helm tasks:
	// NAME.tgz, or a NAME/ directory.
	ChartsDir = "charts/"
)

// Package is a package as read.
type Package struct {
	Operator *OperatorFile
	Params   *ParamsFile
	// Templates maps a path relative to templates/ to its content.
	Templates map[string]string
	// Charts are the Helm charts of charts/, by name, each a gzip tarball.
	Charts map[string][]byte
	// Files are the package's files by path, as read, so that it can be
	// written back unchanged.
	Files map[string][]byte
	// Origin is where a package read from a registry is for good: the
	// reference by digest its tag resolved to (oci://REGISTRY/REPOSITORY@sha256:…).
	Origin string
}

// OperatorFile is operator.yaml.
type OperatorFile struct {
	APIVersion        string                      `json:"apiVersion,omitempty"`
	Name              string                      `json:"name"`
	Description       string                      `json:"description,omitempty"`
	OperatorVersion   string                      `json:"operatorVersion"`
	AppVersion        string                      `json:"appVersion,omitempty"`
	KUDOVersion       string                      `json:"kudoVersion,omitempty"`
	KubernetesVersion string                      `json:"kubernetesVersion,omitempty"`
	Maintainers       []*kudov1beta1.Maintainer   `json:"maintainers,omitempty"`
	URL               string                      `json:"url,omitempty"`
	Tasks             []kudov1beta1.Task          `json:"tasks,omitempty"`
	Plans             map[string]kudov1beta1.Plan `json:"plans,omitempty"`
	NamespaceManifest string                      `json:"namespaceManifest,omitempty"`
	// HealthChecks (kudo-ng) judge the objects of the kinds they name.
	HealthChecks []kudov1beta1.HealthCheck `json:"healthChecks,omitempty"`
	// TypedAPI (kudo-ng) names the kind the package is served as.
	TypedAPI *kudov1beta1.TypedAPI `json:"typedAPI,omitempty"`
}

// ParamsFile is params.yaml.
type ParamsFile struct {
	APIVersion string      `json:"apiVersion,omitempty"`
	Groups     []Group     `json:"groups,omitempty"`
	Parameters []Parameter `json:"parameters,omitempty"`
}

// Group gathers parameters for display.
type Group struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int    `json:"priority,omitempty"`
}

// Parameter is a parameter of params.yaml. Its default may be any YAML value.
type Parameter struct {
	Name        string                    `json:"name"`
	DisplayName string                    `json:"displayName,omitempty"`
	Description string                    `json:"description,omitempty"`
	Required    *bool                     `json:"required,omitempty"`
	Default     any                       `json:"default,omitempty"`
	Trigger     string                    `json:"trigger,omitempty"`
	Type        kudov1beta1.ParameterType `json:"type,omitempty"`
	Immutable   *bool                     `json:"immutable,omitempty"`
	// Sensitive (kudo-ng) values are masked wherever kudo-ng shows them.
	Sensitive *bool  `json:"sensitive,omitempty"`
	Enum      *[]any `json:"enum,omitempty"`
	Group     string `json:"group,omitempty"`
	Advanced  bool   `json:"advanced,omitempty"`
	Hint      string `json:"hint,omitempty"`
	// OldName (kudo-ng; KUDO's KEP-33) is the parameter this one was in the
	// previous API version of the typed API.
	OldName string `json:"oldName,omitempty"`
	// Conversion (kudo-ng) converts the previous API version's value.
	Conversion *Conversion `json:"conversion,omitempty"`
}

// Conversion is a parameter's conversion rule in params.yaml: values as
// YAML writes them, which the OperatorVersion holds as strings.
type Conversion struct {
	Values     map[string]any `json:"values,omitempty"`
	Expression string         `json:"expression,omitempty"`
	Reverse    string         `json:"reverse,omitempty"`
	Default    any            `json:"default,omitempty"`
}

// IsRequired applies KUDO's default: a parameter is required unless it says not.
func (p *Parameter) IsRequired() bool { return p.Required == nil || *p.Required }

// IsImmutable reports whether the parameter may not change after install.
func (p *Parameter) IsImmutable() bool { return p.Immutable != nil && *p.Immutable }
