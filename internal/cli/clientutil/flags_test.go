package clientutil

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestWaitTimeTakesKUDOsSeconds: --wait-time 300, as KUDO's scripts pass
// it, is 300 seconds; a duration works too.
func TestWaitTimeTakesKUDOsSeconds(t *testing.T) {
	for value, want := range map[string]time.Duration{"300": 5 * time.Minute, "90s": 90 * time.Second, "2m": 2 * time.Minute} {
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var wait bool
		var waitTime time.Duration
		WaitFlags(f, &wait, &waitTime, "")
		if err := f.Parse([]string{"--wait-time", value}); err != nil || waitTime != want {
			t.Errorf("--wait-time %s: %s, %v; want %s", value, waitTime, err, want)
		}
	}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var wait bool
	var waitTime time.Duration
	WaitFlags(f, &wait, &waitTime, "")
	if waitTime != 5*time.Minute {
		t.Errorf("default %s", waitTime)
	}
	if err := f.Parse([]string{"--wait-time", "soon"}); err == nil {
		t.Error("--wait-time soon must be refused")
	}
}
