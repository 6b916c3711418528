package v1beta1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// String is the ObjectRef as the status holds it.
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.APIVersion + " " + r.Kind + " " + r.Name
	}
	return r.APIVersion + " " + r.Kind + " " + r.Namespace + "/" + r.Name
}

// MarshalJSON writes the ObjectRef as its String.
func (r ObjectRef) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// UnmarshalJSON reads what MarshalJSON writes, and the object of four fields
// that statuses held before.
func (r *ObjectRef) UnmarshalJSON(b []byte) error {
	if isJSONObject(b) {
		var legacy struct{ APIVersion, Kind, Namespace, Name string }
		err := json.Unmarshal(b, &legacy)
		*r = ObjectRef(legacy)
		return err
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	ref, err := parseObjectRef(strings.Fields(s))
	if err != nil {
		return fmt.Errorf("object %q: %w", s, err)
	}
	*r = ref
	return nil
}

func parseObjectRef(fields []string) (ObjectRef, error) {
	if len(fields) != 3 {
		return ObjectRef{}, fmt.Errorf("want <apiVersion> <kind> [<namespace>/]<name>")
	}
	r := ObjectRef{APIVersion: fields[0], Kind: fields[1], Name: fields[2]}
	if ns, name, ok := strings.Cut(fields[2], "/"); ok {
		r.Namespace, r.Name = ns, name
	}
	return r, nil
}

// String is the InventoryObject as the status holds it.
func (o InventoryObject) String() string {
	switch {
	case o.Generation != 0:
		return o.ObjectRef.String() + " generation=" + strconv.FormatInt(o.Generation, 10)
	case o.Hash != "":
		return o.ObjectRef.String() + " hash=" + o.Hash
	}
	return o.ObjectRef.String()
}

// MarshalJSON writes the InventoryObject as its String.
func (o InventoryObject) MarshalJSON() ([]byte, error) { return json.Marshal(o.String()) }

// UnmarshalJSON reads what MarshalJSON writes, and the object of six fields
// that statuses held before.
func (o *InventoryObject) UnmarshalJSON(b []byte) error {
	if isJSONObject(b) {
		var legacy struct {
			APIVersion, Kind, Namespace, Name, Hash string
			Generation                              int64
		}
		err := json.Unmarshal(b, &legacy)
		*o = InventoryObject{
			ObjectRef:  ObjectRef{APIVersion: legacy.APIVersion, Kind: legacy.Kind, Namespace: legacy.Namespace, Name: legacy.Name},
			Generation: legacy.Generation, Hash: legacy.Hash,
		}
		return err
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	fields := strings.Fields(s)
	var seen string
	if len(fields) == 4 {
		seen, fields = fields[3], fields[:3]
	}
	ref, err := parseObjectRef(fields)
	if err != nil {
		return fmt.Errorf("inventory object %q: %w", s, err)
	}
	*o = InventoryObject{ObjectRef: ref}
	switch key, value, _ := strings.Cut(seen, "="); key {
	case "":
	case "generation":
		if o.Generation, err = strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("inventory object %q: generation: %w", s, err)
		}
	case "hash":
		o.Hash = value
	default:
		return fmt.Errorf("inventory object %q: want generation=<n> or hash=<hex> after the name", s)
	}
	return nil
}

func isJSONObject(b []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) }
