package healthrule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"

	"google.golang.org/protobuf/types/known/structpb"
)

// ValueExpression is CEL that gives a value rather than a verdict, in the
// environment and within the bounds of the health rules: the conversion of
// a typed object's field between two versions of its kind
// (docs/typed-apis.md). It reads the object's metadata, spec and status.
type ValueExpression struct {
	Field, Source string
	expression    *Expression
}

// NewValueExpression compiles source, found at field (where an error
// names it), as rules are: no more than MaxExpressionBytes, its cost
// estimated on the largest object there can be within EstimatedCostLimit.
func NewValueExpression(field, source string) (*ValueExpression, error) {
	if len(source) > MaxExpressionBytes {
		return nil, &FieldError{field, fmt.Sprintf("the expression has %d bytes, more than the %d an expression may",
			len(source), MaxExpressionBytes)}
	}
	checked, issues := dynamicEnv.Compile(source)
	if issues.Err() != nil {
		return nil, &FieldError{field, issueMessages(issues)}
	}
	if err := estimatedCost(dynamicEnv, checked, field); err != nil {
		return nil, err
	}
	program, err := newProgram(checked)
	if err != nil {
		return nil, &FieldError{field, err.Error()}
	}
	return &ValueExpression{Field: field, Source: source, expression: &Expression{Field: field, Source: source, program: program}}, nil
}

// Eval gives the expression's value on obj, as JSON holds it; ok is false
// when it reads a field obj does not have. It runs within CostLimit and
// EvalTimeout.
func (e *ValueExpression) Eval(ctx context.Context, obj map[string]any) (value any, ok bool, err error) {
	vars := make(map[string]any, len(variables))
	for _, v := range variables {
		if value, set := obj[v]; set {
			vars[v] = value
		}
	}
	ctx, cancel := context.WithTimeout(ctx, EvalTimeout)
	defer cancel()
	out, _, err := e.expression.program.ContextEval(ctx, vars)
	switch {
	case err != nil && absent(err):
		return nil, false, nil
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, false, fmt.Errorf("%s: took longer than %s, the longest an expression may", e.Field, EvalTimeout)
	case err != nil:
		return nil, false, fmt.Errorf("%s: %w", e.Field, err)
	}
	native, err := out.ConvertToNative(reflect.TypeFor[*structpb.Value]())
	if err != nil {
		return nil, false, fmt.Errorf("%s: gives a %s, which JSON cannot hold", e.Field, out.Type())
	}
	return integral(native.(*structpb.Value).AsInterface()), true, nil
}

// integral gives whole numbers as int64, as a JSON decoder of Kubernetes
// objects does: structpb holds every number as a float64.
func integral(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
	case []any:
		for i := range v {
			v[i] = integral(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = integral(v[k])
		}
	}
	return v
}
