// Package output writes the machine-readable output of kubectl kudo's -o
// yaml|json as KUDO's did, so that jq and yq lines written against KUDO keep
// working.
package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Format is the value of -o: yaml, json, or empty for the human output.
type Format string

// The formats -o takes.
const (
	YAML Format = "yaml"
	JSON Format = "json"
)

// errInvalid is KUDO's error for any other format.
var errInvalid = errors.New("invalid output format, only support 'yaml' or 'json' or empty")

// Flag adds -o, --output with KUDO's help for the command.
func Flag(f *pflag.FlagSet, format *Format, help string) {
	f.StringVarP((*string)(format), "output", "o", "", help)
}

// Validate refuses a format other than yaml, json or empty.
func (f Format) Validate() error {
	switch f {
	case "", YAML, JSON:
		return nil
	}
	return errInvalid
}

// Object writes one object: indented JSON, or YAML followed by a blank line,
// as KUDO wrote it.
func Object(out io.Writer, format Format, obj any) error {
	switch format {
	case YAML:
		return writeYAML(out, obj)
	case JSON:
		return writeJSON(out, obj)
	}
	return errInvalid
}

// Objects writes a list: one JSON array, or a YAML document per object and
// the end-of-documents marker, as KUDO wrote them.
func Objects[T any](out io.Writer, format Format, objs []T) error {
	switch format {
	case YAML:
		for _, obj := range objs {
			if _, err := fmt.Fprintln(out, "---"); err != nil {
				return err
			}
			if err := writeYAML(out, obj); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintln(out, "...")
		return err
	case JSON:
		if objs == nil {
			objs = []T{}
		}
		return writeJSON(out, objs)
	}
	return errInvalid
}

func writeJSON(out io.Writer, obj any) error {
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to marshal to json: %w", err)
	}
	_, err = fmt.Fprintln(out, string(b))
	return err
}

func writeYAML(out io.Writer, obj any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("failed to marshal to yaml: %w", err)
	}
	_, err = fmt.Fprintln(out, string(b))
	return err
}
