package packages

import (
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

// FromOperatorVersion rebuilds the package of an installed OperatorVersion,
// so that the verify rules run on what the cluster stores.
func FromOperatorVersion(ov *kudov1beta1.OperatorVersion) *Package {
	p := &Package{
		Operator: &OperatorFile{
			APIVersion: APIVersion, Name: ov.Spec.Operator.Name, OperatorVersion: ov.Spec.Version, AppVersion: ov.Spec.AppVersion,
			Tasks: ov.Spec.Tasks, Plans: ov.Spec.Plans, HealthChecks: ov.Spec.HealthChecks,
		},
		Params:    &ParamsFile{APIVersion: APIVersion},
		Templates: ov.Spec.Templates,
		Charts:    ov.Spec.Charts,
	}
	for _, in := range ov.Spec.Parameters {
		param := Parameter{
			Name: in.Name, DisplayName: in.DisplayName, Description: in.Description, Required: in.Required,
			Trigger: in.Trigger, Type: in.Type, Immutable: in.Immutable, Sensitive: in.Sensitive, OldName: in.OldName,
		}
		if c := in.Conversion; c != nil {
			param.Conversion = &Conversion{Expression: c.Expression, Reverse: c.Reverse}
			if c.Default != nil {
				param.Conversion.Default = *c.Default
			}
			if len(c.Values) > 0 {
				param.Conversion.Values = make(map[string]any, len(c.Values))
				for from, to := range c.Values {
					param.Conversion.Values[from] = to
				}
			}
		}
		if in.Default != nil {
			param.Default = *in.Default
		}
		if in.Enum != nil {
			enum := make([]any, 0, len(*in.Enum))
			for _, e := range *in.Enum {
				enum = append(enum, e)
			}
			param.Enum = &enum
		}
		p.Params.Parameters = append(p.Params.Parameters, param)
	}
	if p.Templates == nil {
		p.Templates = map[string]string{}
	}
	return p
}

// VerifyOperatorVersion runs the verify rules that an installed
// OperatorVersion can break, as install does: only what cannot run is an
// error. The package metadata rules (semver of the versions,
// kubernetesVersion) are package verify's alone, and one without a deploy
// plan is fine to upgrade to (admission refuses a new Instance of it).
// Issues name fields of the OperatorVersion's spec.
func VerifyOperatorVersion(ov *kudov1beta1.OperatorVersion, limits render.Limits) *Report {
	// Its templates render in "default", as package verify's do; its
	// author's namespace waits for the render slots.
	limits.Share = ov.Namespace
	r := Verify(FromOperatorVersion(ov), VerifyOptions{skipMetadata: true, SkipDeployPlan: true, Install: true, RenderLimits: limits})
	for _, list := range [][]Issue{r.Errors, r.Warnings} {
		for i := range list {
			list[i] = specIssue(list[i])
		}
	}
	return r
}

// specIssue says where an issue is in the OperatorVersion's spec rather than
// in the package's files.
func specIssue(i Issue) Issue {
	switch {
	case i.File == OperatorFileName:
		i.Field = "spec." + i.Field
	case i.File == ParamsFileName:
		i.Field = "spec." + i.Field
	case strings.HasPrefix(i.File, TemplatesDir):
		prefix := "spec.templates[" + strings.TrimPrefix(i.File, TemplatesDir) + "]"
		if i.Field != "" {
			prefix += " " + i.Field
		}
		i.Field = prefix
	}
	i.File = "OperatorVersion"
	return i
}
