package render

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Parameter values are pasted into templates as text, so a value that is
// YAML could add objects to a package someone else wrote, move them (with
// kudo.dev/namespace), or change what the template set. A user who may only
// create Instances would then get whatever the manager may do.
//
// The rule: a template renders, outside the YAML values it puts parameter
// values in, exactly what it renders with those values replaced by plain
// words: the same objects, mapping keys, sequence lengths and scalars. A
// value may fill its own YAML value as it likes (a string parameter holding
// a snippet of YAML indented into place is fine), but nothing beyond it.

// TemplateObjects renders a template and parses its objects, refusing a
// render in which a parameter value changes more than its own YAML value.
func (l Limits) TemplateObjects(name, text string, vars *Variables) ([]*unstructured.Unstructured, error) {
	_, objs, err := l.guarded(name, text, vars, l.Objects)
	return objs, err
}

// ParameterFile renders a KudoOperator task's parameter file and parses it
// into the child's parameter values, bounded and guarded as a template's
// objects are: a parent's parameter value cannot add or change the child's
// other parameters.
func (l Limits) ParameterFile(name, text string, vars *Variables) (rendered string, values map[string]any, err error) {
	rendered, docs, err := l.guarded(name, text, vars, l.parameterValues)
	if err != nil || len(docs) == 0 {
		return rendered, nil, err
	}
	return rendered, docs[0].Object, nil
}

// parameterValues parses a parameter file as one YAML map, held as the one
// object the guard compares.
func (l Limits) parameterValues(name, text string) ([]*unstructured.Unstructured, error) {
	if err := l.bounded([]byte(text)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var values map[string]any
	if err := yaml.Unmarshal([]byte(text), &values); err != nil {
		return nil, fmt.Errorf("parameter file %s is not a YAML map of parameters: %w", name, err)
	}
	if values == nil {
		return nil, nil
	}
	return []*unstructured.Unstructured{{Object: values}}, nil
}

// parser reads a render into what the guard compares.
type parser func(name, text string) ([]*unstructured.Unstructured, error)

func (l Limits) guarded(name, text string, vars *Variables, parse parser) (string, []*unstructured.Unstructured, error) {
	rendered, err := l.Template(name, text, vars)
	if err != nil {
		return "", nil, err
	}
	objs, err := parse(name, rendered)
	c := &check{limits: l, name: name, text: text, vars: vars, rendered: rendered, parse: parse, objs: objs, parseErr: err}
	if refused := checkValues(c); refused != nil {
		return "", nil, refused
	}
	return rendered, objs, err
}

// checkValues compares a render, parsed into objs or parseErr, with the
// render whose suspect values are replaced by words: all suspects at once,
// then, to name the culprit, one at a time.
func checkValues(c *check) error {
	name, vars := c.name, c.vars
	suspects := suspects(vars.Params)
	if len(suspects) == 0 {
		return nil
	}
	what := c.differs(suspects)
	if what == "" {
		return nil
	}
	culprits := suspects
	if len(suspects) > 1 {
		for _, p := range suspects {
			if w := c.differs([]string{p}); w != "" {
				culprits, what = []string{p}, w
				break
			}
		}
	}
	subject := "parameter " + culprits[0] + "'s value"
	if len(culprits) > 1 {
		// None alone, but together.
		subject += ", together with " + strings.Join(culprits[1:], "'s, ") + "'s,"
	}
	return fmt.Errorf("%s: %s %s: a parameter value must stay inside the YAML value the template puts it in", name, subject, what)
}

// plain says whether a string is only text wherever a template puts it:
// in a plain, quoted or block scalar, a flow collection, a key, a comment or
// at the start of a line. It allows letters, digits and the punctuation that
// is no YAML indicator where it stands; most values are plain, and only the
// others cost a second render.
func plain(s string) bool {
	runes := []rune(s)
	for i, r := range runes {
		var next rune // 0 at the end
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		case i == 0:
			// At the start of a scalar or line most punctuation is an
			// indicator: -, ---, ..., ?, &, *, !, |, >, %, @, #, quotes.
			alnum := unicode.IsLetter(next) || unicode.IsDigit(next)
			if !strings.ContainsRune("/_$(+", r) && (r != '.' || next == '.') && (r != '-' || !alnum) {
				return false
			}
		case strings.ContainsRune(".-_/=+~@$%^();?!&*|<>#", r):
			// No indicators after the start; # only after a space, below.
		case r == ':':
			if next == 0 || next == ' ' {
				return false
			}
		case r == ' ':
			if next == 0 || next == '#' {
				return false
			}
		default:
			// Line breaks (also \r, U+0085, U+2028), tabs, quotes, \, flow
			// indicators, other symbols.
			return false
		}
	}
	return true
}

// suspects are the parameters, sorted, with a string that is not plain in
// their value, or in the items and keys of an array or map value.
func suspects(params map[string]any) []string {
	var names []string
	for name, v := range params {
		if !plainValue(v) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func plainValue(v any) bool {
	switch v := v.(type) {
	case string:
		return plain(v)
	case []any:
		for _, item := range v {
			if !plainValue(item) {
				return false
			}
		}
	case map[string]any:
		for k, item := range v {
			if !plain(k) || !plainValue(item) {
				return false
			}
		}
	}
	return true
}

// words replaces the strings that are not plain in the values of some
// parameters by words, kudoparam<set><n>z: the n-th replaced string in the
// same order whatever the set, and no word is part of another.
type words struct {
	set    string
	params map[string]any
	words  []string
	values []string
	owners []string
}

func replace(params map[string]any, names []string, set string) *words {
	w := &words{set: set, params: make(map[string]any, len(params))}
	for name, v := range params {
		w.params[name] = v
	}
	for _, name := range names {
		w.params[name] = w.replace(params[name], name)
	}
	return w
}

func (w *words) prefix() string { return "kudoparam" + w.set }

func (w *words) replace(v any, owner string) any {
	switch v := v.(type) {
	case string:
		if plain(v) {
			return v
		}
		word := w.prefix() + strconv.Itoa(len(w.words)) + "z"
		w.words, w.values, w.owners = append(w.words, word), append(w.values, v), append(w.owners, owner)
		return word
	case []any:
		items := make([]any, len(v))
		for i, item := range v {
			items[i] = w.replace(item, owner)
		}
		return items
	case map[string]any:
		m := make(map[string]any, len(v))
		for _, k := range sortedKeys(v) {
			m[w.replace(k, owner).(string)] = w.replace(v[k], owner)
		}
		return m
	}
	return v
}

// to maps each word to what f makes of its index.
func (w *words) to(f func(i int) string) *strings.Replacer {
	pairs := make([]string, 0, 2*len(w.words))
	for i, word := range w.words {
		pairs = append(pairs, word, f(i))
	}
	return strings.NewReplacer(pairs...)
}

// check compares a render with the renders of the same template whose
// suspect values are words.
type check struct {
	limits               Limits
	name, text, rendered string
	vars                 *Variables
	parse                parser
	objs                 []*unstructured.Unstructured
	parseErr             error
}

// differs says what the values of the named parameters change beyond their
// own YAML values; "" when nothing.
func (c *check) differs(names []string) string {
	a := replace(c.vars.Params, names, "a")
	aText, err := c.render(a)
	if err == nil && aText == c.rendered {
		return "" // The template does not print them.
	}
	var aObjs []*unstructured.Unstructured
	if err == nil {
		aObjs, err = c.parse(c.name, aText)
	}
	switch {
	case err != nil && c.parseErr != nil:
		return "" // The template fails without the values too: its own error says why.
	case err != nil:
		return "cannot be checked: with plain words for the values, the template fails: " + err.Error()
	case c.parseErr != nil:
		return "breaks the template's YAML: " + strings.TrimPrefix(c.parseErr.Error(), c.name+": ")
	case len(aObjs) != len(c.objs):
		return fmt.Sprintf("makes %d objects where the template makes %d", len(c.objs), len(aObjs))
	}
	cmp := &comparison{prefix: a.prefix(), back: a.to(func(i int) string { return a.values[i] }),
		show: a.to(func(i int) string { return "<" + a.owners[i] + ">" })}
	if what := cmp.objects(aObjs, nil, c.objs); what != "" || !cmp.needB {
		return what
	}
	// A scalar of the template differs: the values may have made it (with
	// b64enc, say), or changed a constant of the template. The render with
	// other words tells: what the values make differs between the two.
	b := replace(c.vars.Params, names, "b")
	bText, err := c.render(b)
	var bObjs []*unstructured.Unstructured
	if err == nil {
		bObjs, err = c.parse(c.name, bText)
	}
	if err != nil || len(bObjs) != len(aObjs) {
		return "cannot be checked: with other plain words for the values, the template renders otherwise"
	}
	cmp.toB = a.to(func(i int) string { return b.words[i] })
	return cmp.objects(aObjs, bObjs, c.objs)
}

func (c *check) render(w *words) (string, error) {
	vars := *c.vars
	vars.Params = w.params
	return c.limits.Template(c.name, c.text, &vars)
}

// comparison walks the objects rendered with words (a, and b if known)
// beside those rendered with the values (r).
type comparison struct {
	// prefix starts a's words.
	prefix string
	// back maps a's words to the values; show to the parameters' names, for
	// errors, which must not show values (sensitive ones come from Secrets).
	back, show *strings.Replacer
	// toB maps a's words to b's; nil until b is rendered.
	toB *strings.Replacer
	// needB is set when a scalar of a differs in r, which b is needed to judge.
	needB bool
}

func (cmp *comparison) objects(a, b, r []*unstructured.Unstructured) string {
	for i := range a {
		var bObj map[string]any
		if b != nil {
			bObj = b[i].Object
		}
		if what := cmp.walk(a[i].Object, bObj, r[i].Object, ""); what != "" {
			return fmt.Sprintf("%s object %d (%s)", what, i+1, cmp.show.Replace(a[i].GetKind()))
		}
	}
	return ""
}

// walk compares a with r at path at (b is a's counterpart in the other
// render with words): the same keys, lengths and constants. A scalar that
// holds a word is a value's own: r may have anything there.
func (cmp *comparison) walk(a, b, r any, at string) string {
	switch a := a.(type) {
	case map[string]any:
		rm, ok := r.(map[string]any)
		if !ok {
			return "changes the type of " + at + " in"
		}
		bm, _ := b.(map[string]any)
		seen := map[string]bool{}
		for _, k := range sortedKeys(a) {
			path := join(at, cmp.show.Replace(k))
			rk := cmp.back.Replace(k)
			if _, ok := rm[rk]; !ok || seen[rk] {
				return "removes " + path + " from"
			}
			seen[rk] = true
			var bv any
			if cmp.toB != nil {
				bv = bm[cmp.toB.Replace(k)]
			}
			if what := cmp.walk(a[k], bv, rm[rk], path); what != "" {
				return what
			}
		}
		if len(seen) < len(rm) {
			if at == "" {
				return "adds a key at the top of"
			}
			return "adds a key to " + at + " of"
		}
	case []any:
		rl, ok := r.([]any)
		if !ok {
			return "changes the type of " + at + " in"
		}
		if len(rl) != len(a) {
			return "changes the number of items of " + at + " in"
		}
		bl, _ := b.([]any)
		for i := range a {
			var bv any
			if i < len(bl) {
				bv = bl[i]
			}
			if what := cmp.walk(a[i], bv, rl[i], at+"["+strconv.Itoa(i)+"]"); what != "" {
				return what
			}
		}
	case string:
		if strings.Contains(a, cmp.prefix) {
			return ""
		}
		return cmp.scalar(a, b, r, at)
	default:
		return cmp.scalar(a, b, r, at)
	}
	return ""
}

// scalar compares a scalar without words: the template's own, which r must
// have too, unless the values made it (it then differs in b).
func (cmp *comparison) scalar(a, b, r any, at string) string {
	switch {
	case reflect.DeepEqual(a, r):
		return ""
	case cmp.toB == nil:
		cmp.needB = true
		return ""
	case reflect.DeepEqual(a, b):
		return "changes " + at + " of"
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
