package render

import (
	"fmt"
	"reflect"
	"strconv"
)

// formatted bounds the bytes v takes formatted, by fmt (%v), encoding/json
// (indented too) or YAML: each string and int its length, each other number
// 24, and each value four bytes plus four for each level it is nested at
// (two of indentation where it opens, two where it closes). It counts up to max and
// returns more past it, so that a list holding a list twice, forty times
// over, or a dict holding itself, costs no more than max to count: values
// shared or nested that way are small to hold and huge to format.
func formatted(v any, max int) int {
	m := measure{max: max}
	m.value(v, 0)
	return m.n
}

type measure struct{ n, max int }

func (m *measure) add(n int) bool {
	m.n += n
	return m.n <= m.max
}

func (m *measure) value(v any, depth int) {
	if !m.add(4 + 4*depth) {
		return
	}
	// The types templates mostly hold, without reflection.
	switch v := v.(type) {
	case nil:
		m.add(5)
	case string:
		m.add(len(v))
	case int:
		m.add(len(strconv.Itoa(v)))
	case int64:
		m.add(len(strconv.FormatInt(v, 10)))
	case []any:
		for _, item := range v {
			if m.n > m.max {
				return
			}
			m.value(item, depth+1)
		}
	case map[string]any:
		for k, item := range v {
			if !m.add(len(k)) {
				return
			}
			m.value(item, depth+1)
		}
	default:
		m.reflect(reflect.ValueOf(v), depth)
	}
}

func (m *measure) reflect(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Invalid:
		m.add(5)
	case reflect.String:
		m.add(v.Len())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			m.add(5)
		} else if !m.stringer(v) {
			m.reflect(v.Elem(), depth)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			m.add(6 * v.Len()) // fmt writes bytes as [104 105], or 0x68, 0x69
			return
		}
		for i := 0; i < v.Len() && m.n <= m.max; i++ {
			m.item(v.Index(i), depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next() && m.n <= m.max; {
			m.item(it.Key(), depth+1)
			m.item(it.Value(), depth+1)
		}
	case reflect.Struct:
		if m.stringer(v) {
			return
		}
		for i := 0; i < v.NumField() && m.n <= m.max; i++ {
			m.item(v.Field(i), depth+1)
		}
	default:
		m.add(24)
	}
}

func (m *measure) item(v reflect.Value, depth int) {
	if v.CanInterface() {
		m.value(v.Interface(), depth)
		return
	}
	if m.add(4 + 4*depth) {
		m.reflect(v, depth)
	}
}

// stringer counts what fmt writes of a value with a String method (a
// time.Time, a semver.Version): that, rather than its fields.
func (m *measure) stringer(v reflect.Value) bool {
	if !v.CanInterface() {
		return false
	}
	s, ok := v.Interface().(fmt.Stringer)
	if ok {
		m.add(len(s.String()))
	}
	return ok
}

// holds reports whether v holds, at any depth, one of the maps in targets:
// setting or merging v into one of them would make a dict hold itself, which
// formatting, copying or merging would follow without end.
func holds(v any, targets map[uintptr]bool) bool {
	w := walker{seen: map[[2]uintptr]bool{}, visit: func(p uintptr) bool { return targets[p] }}
	return w.walk(reflect.ValueOf(v))
}

// mapsOf are the maps v holds, itself included.
func mapsOf(v any) map[uintptr]bool {
	maps := map[uintptr]bool{}
	w := walker{seen: map[[2]uintptr]bool{}, visit: func(p uintptr) bool { maps[p] = true; return false }}
	w.walk(reflect.ValueOf(v))
	return maps
}

// walker visits each map a value holds once, stopping when visit says so.
type walker struct {
	// seen are the slices (start, length) and maps (pointer, length) walked.
	seen  map[[2]uintptr]bool
	visit func(uintptr) bool
}

func (w *walker) walk(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		return !v.IsNil() && w.walk(v.Elem())
	case reflect.Slice:
		if w.once(v) {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if w.walk(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		if w.once(v) {
			return false
		}
		if w.visit(v.Pointer()) {
			return true
		}
		for it := v.MapRange(); it.Next(); {
			if w.walk(it.Value()) {
				return true
			}
		}
	}
	return false
}

// once reports whether the slice or map was walked before, and records it.
func (w *walker) once(v reflect.Value) bool {
	if v.IsNil() {
		return true
	}
	key := [2]uintptr{v.Pointer(), uintptr(v.Len())}
	if w.seen[key] {
		return true
	}
	w.seen[key] = true
	return false
}
