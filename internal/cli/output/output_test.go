package output

import (
	"bytes"
	"testing"
)

type named struct {
	Name string `json:"name"`
}

// TestOutputIsWhatKUDOWrote: jq and yq lines written against KUDO's -o
// output read ours: indented JSON, YAML documents with a blank line after
// each, a list's documents between --- and ..., an empty list as [].
func TestOutputIsWhatKUDOWrote(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		write  func(*bytes.Buffer, Format) error
		want   string
	}{
		{"an object as JSON", JSON, func(b *bytes.Buffer, f Format) error { return Object(b, f, named{"zk"}) },
			"{\n  \"name\": \"zk\"\n}\n"},
		{"an object as YAML", YAML, func(b *bytes.Buffer, f Format) error { return Object(b, f, named{"zk"}) }, "name: zk\n\n"},
		{"a list as JSON", JSON, func(b *bytes.Buffer, f Format) error { return Objects(b, f, []named{{"a"}, {"b"}}) },
			"[\n  {\n    \"name\": \"a\"\n  },\n  {\n    \"name\": \"b\"\n  }\n]\n"},
		{"a list as YAML", YAML, func(b *bytes.Buffer, f Format) error { return Objects(b, f, []named{{"a"}, {"b"}}) },
			"---\nname: a\n\n---\nname: b\n\n...\n"},
		{"no list as JSON", JSON, func(b *bytes.Buffer, f Format) error { return Objects[named](b, f, nil) }, "[]\n"},
		{"no list as YAML", YAML, func(b *bytes.Buffer, f Format) error { return Objects[named](b, f, nil) }, "...\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, tt.format); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("wrote %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func TestAFormatKUDODidNotWriteIsRefusedWithItsError(t *testing.T) {
	const want = "invalid output format, only support 'yaml' or 'json' or empty"
	for _, f := range []Format{"", YAML, JSON} {
		if err := f.Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", f, err)
		}
	}
	if err := Format("wide").Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate(wide) = %v, want KUDO's %q", err, want)
	}
	var b bytes.Buffer
	if err := Object(&b, "table", named{"zk"}); err == nil || err.Error() != want || b.Len() != 0 {
		t.Errorf("Object(table) = %v after writing %q, want KUDO's error and nothing written", err, b.String())
	}
}
