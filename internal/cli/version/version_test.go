package version

import (
	"encoding/json"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestVersionOutputIsKUDOs: -o json has KUDO's clientVersion and its keys.
func TestVersionOutputIsKUDOs(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := NewCmd(streams)
	cmd.SetArgs([]string{"-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, key := range []string{"gitVersion", "gitCommit", "buildDate", "goVersion", "compiler", "platform", "kubernetesClientVersion"} {
		if _, ok := got["clientVersion"][key]; !ok {
			t.Errorf("no clientVersion.%s in %s", key, out)
		}
	}
}
