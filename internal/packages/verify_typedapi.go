package packages

import (
	"fmt"
	"maps"
	"slices"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// typedAPI checks that the package can be served as a kind of its own
// (docs/typed-apis.md): its names, and a field for each parameter. A
// package that names its kind (typedAPI in operator.yaml) must be; one that
// does not still installs and runs as Instances, with a warning.
func (v *verifier) typedAPI() {
	o := v.p.Operator
	if o.Name == "" || v.hasErrorsIn(ParamsFileName) {
		// What else is wrong says it first.
		return
	}
	report := v.r.warnf
	if o.TypedAPI != nil {
		report = v.r.errorf
	}
	names, err := typedapi.NamesOf(o.Name, o.TypedAPI)
	if err != nil {
		report(OperatorFileName, "", "%v", err)
		return
	}
	parameters, err := v.p.apiParameters()
	if err != nil {
		// parameters() says why.
		return
	}
	if _, err := typedapi.CRD(names, o.Name, parameters); err != nil {
		report(ParamsFileName, "", "the typed API %s cannot be served: %v", names.CRDName(), err)
	}
	v.conversionRules(parameters)
	for _, name := range slices.Sorted(maps.Keys(v.rendered)) {
		for _, obj := range v.rendered[name] {
			if defined := crd.DefinedBy(obj); crd.Is(obj) && (defined.Kind == names.Kind || defined.Plural == names.Plural) {
				v.r.warnf(OperatorFileName, "typedAPI", "templates/%s defines %s %s too, so kubectl get %s would name two kinds: "+
					"give the package's its own (typedAPI.kind)", name, defined.Group, defined.Kind, names.Plural)
			}
		}
	}
}

// conversionRules checks the rules that convert a typed object from the
// API version before (docs/typed-apis.md): their expressions compile within
// their bounds, and a rule names a field other than its own.
func (v *verifier) conversionRules(parameters []kudov1beta1.Parameter) {
	for i := range parameters {
		p := &parameters[i]
		field := fmt.Sprintf("parameters[%d]", i)
		if p.OldName == p.Name && p.Name != "" {
			v.r.errorf(ParamsFileName, field+".oldName", "parameter %s: oldName is its own name; it names the parameter it was in the API version before", p.Name)
		}
		if p.Conversion == nil {
			continue
		}
		for _, x := range [][2]string{{"expression", p.Conversion.Expression}, {"reverse", p.Conversion.Reverse}} {
			if x[1] == "" {
				continue
			}
			if _, err := healthrule.NewValueExpression("parameter "+p.Name, x[1]); err != nil {
				v.r.errorf(ParamsFileName, field+".conversion."+x[0], "%v", err)
			}
		}
	}
}

// evolution checks that the package's typed API breaks nothing previous,
// earlier versions of it, served: each break is an error here, as install
// and upgrade refuse it where objects hold a value it breaks.
func (v *verifier) evolution(previous []*Package) {
	if len(previous) == 0 || v.hasErrorsIn(ParamsFileName) || v.hasErrorsIn(OperatorFileName) {
		return
	}
	_, next, err := v.p.Convert("default")
	if err != nil {
		return
	}
	versions := make([]kudov1beta1.OperatorVersion, 0, len(previous))
	for _, p := range previous {
		_, ov, err := p.Convert("default")
		if err != nil {
			v.r.errorf(OperatorFileName, "", "--previous %s %s: %v", p.Operator.Name, p.Operator.OperatorVersion, err)
			return
		}
		if p.Operator.Name != v.p.Operator.Name {
			v.r.errorf(OperatorFileName, "name", "--previous names package %s, not %s", p.Operator.Name, v.p.Operator.Name)
			return
		}
		versions = append(versions, *ov)
	}
	breaks, err := typedapi.Breaks(versions, next)
	if err != nil {
		v.r.errorf(OperatorFileName, "typedAPI.version", "%v", err)
	}
	for _, b := range breaks {
		v.r.errorf(ParamsFileName, "", "typed API: %s: install and upgrade refuse it where objects hold a value it breaks", b)
	}
}

func (v *verifier) hasErrorsIn(file string) bool {
	for _, e := range v.r.Errors {
		if e.File == file {
			return true
		}
	}
	return false
}
