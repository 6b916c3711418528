package packages

import (
	"maps"
	"slices"

	"github.com/kudo-ng/kudo/internal/crd"
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
	for _, name := range slices.Sorted(maps.Keys(v.rendered)) {
		for _, obj := range v.rendered[name] {
			if defined := crd.DefinedBy(obj); crd.Is(obj) && (defined.Kind == names.Kind || defined.Plural == names.Plural) {
				v.r.warnf(OperatorFileName, "typedAPI", "templates/%s defines %s %s too, so kubectl get %s would name two kinds: "+
					"give the package's its own (typedAPI.kind)", name, defined.Group, defined.Kind, names.Plural)
			}
		}
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
