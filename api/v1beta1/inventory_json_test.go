package v1beta1

import (
	"encoding/json"
	"testing"
)

func TestInventoryObjectsAreStoredAsOneString(t *testing.T) {
	tests := []struct {
		name   string
		object InventoryObject
		json   string
	}{
		{"namespaced, with its generation",
			InventoryObject{ObjectRef: ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Generation: 3},
			`"apps/v1 Deployment shop/web generation=3"`},
		{"namespaced, with its hash",
			InventoryObject{ObjectRef: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-config"}, Hash: "6fabde9888da63da"},
			`"v1 ConfigMap shop/web-config hash=6fabde9888da63da"`},
		{"cluster-scoped",
			InventoryObject{ObjectRef: ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "shop-reader"}, Hash: "01"},
			`"rbac.authorization.k8s.io/v1 ClusterRole shop-reader hash=01"`},
		{"not yet seen",
			InventoryObject{ObjectRef: ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "creds"}},
			`"v1 Secret shop/creds"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.object)
			if err != nil || string(b) != tt.json {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tt.json)
			}
			var back InventoryObject
			if err := json.Unmarshal(b, &back); err != nil || back != tt.object {
				t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tt.object)
			}
		})
	}
}

func TestInventoryObjectsReadTheFormStatusesHeldBefore(t *testing.T) {
	var inv TaskInventory
	legacy := `{"task":"app","plan":"deploy","phase":"main","step":"app","planUID":"u",
		"objects":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web","generation":2}],
		"stale":[{"apiVersion":"v1","kind":"ConfigMap","namespace":"shop","name":"old"}]}`
	if err := json.Unmarshal([]byte(legacy), &inv); err != nil {
		t.Fatal(err)
	}
	want := InventoryObject{ObjectRef: ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Generation: 2}
	if len(inv.Objects) != 1 || inv.Objects[0] != want {
		t.Errorf("objects = %+v, want [%+v]", inv.Objects, want)
	}
	if wantStale := (ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old"}); len(inv.Stale) != 1 || inv.Stale[0] != wantStale {
		t.Errorf("stale = %+v, want [%+v]", inv.Stale, wantStale)
	}
}

func TestMalformedInventoryObjectsAreErrorsThatQuoteThem(t *testing.T) {
	for _, s := range []string{
		`"v1 ConfigMap"`,
		`"v1 ConfigMap shop/web size=3"`,
		`"apps/v1 Deployment shop/web generation=three"`,
		`"v1 ConfigMap shop/web hash=01 extra"`,
	} {
		var o InventoryObject
		if err := json.Unmarshal([]byte(s), &o); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", s, o)
		}
	}
	var r ObjectRef
	if err := json.Unmarshal([]byte(`"v1 ConfigMap shop/web hash=01"`), &r); err == nil {
		t.Errorf("an ObjectRef with an observation = %+v, want an error", r)
	}
}
