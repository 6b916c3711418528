package params

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func testRedactor() *Redactor {
	return NewRedactor(map[string]string{
		"PASSWORD": "hunter2-long", "PIN": "42", "USER": "admin", "KEY": "line1\nline2",
		"DB": "p@ss w/rd", "HTML": "<a&b>", "TOKEN": "pa55word>?", "TAIL": "long-tail",
	}, map[string]bool{"PASSWORD": true, "PIN": true, "KEY": true, "DB": true, "HTML": true, "TOKEN": true, "TAIL": true})
}

// TestRedactor: each form a sensitive value takes in a message is hidden.
func TestRedactor(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct{ name, in, want string }{
		{"as it is", "apply failed: value hunter2-long is bad", "apply failed: value <sensitive PASSWORD> is bad"},
		{"base64, in a Secret's data", "data: {password: " + b64("hunter2-long") + "}", "data: {password: <sensitive PASSWORD>}"},
		{"quoted", `invalid value: "line1\nline2"`, `invalid value: "<sensitive KEY>"`},
		// What follows, today's redactor showed.
		{"a short value, as a word", "pin=42, retrying", "pin=<sensitive PIN>, retrying"},
		{"a short value, quoted", `invalid value: "42"`, `invalid value: "<sensitive PIN>"`},
		{"a short value after an escape", `"pin:\n42"`, `"pin:\n<sensitive PIN>"`},
		{"a short value, base64", "pin: NDI=", "pin: <sensitive PIN>"},
		{"a URL's password", "dial postgres://u:p%40ss%20w%2Frd@db:5432: refused", "dial postgres://u:<sensitive DB>@db:5432: refused"},
		{"query-escaped", "GET /login?pw=p%40ss+w%2Frd: 401", "GET /login?pw=<sensitive DB>: 401"},
		{"path-escaped", "GET /users/p@ss%20w%2Frd: 404", "GET /users/<sensitive DB>: 404"},
		{"JSON-escaped", `{"message":"bad value \u003ca\u0026b\u003e"}`, `{"message":"bad value <sensitive HTML>"}`},
		{"JSON-escaped in JSON", jsonOf(map[string]string{"event": jsonOf(map[string]string{"value": "<a&b>"})}),
			`{"event":"{\"value\":\"<sensitive HTML>\"}"}`},
		{"quoted in quotes", fmt.Sprintf("%q", fmt.Sprintf("invalid value %q", "line1\nline2")), `"invalid value \"<sensitive KEY>\""`},
		{"base64 with the URL alphabet", "token: cGE1NXdvcmQ-Pw==", "token: <sensitive TOKEN>"},
		{"base64 unpadded", "token: cGE1NXdvcmQ+Pw, expired", "token: <sensitive TOKEN>, expired"},
		{"base64 with the URL alphabet, unpadded", "?token=cGE1NXdvcmQ-Pw&next=1", "?token=<sensitive TOKEN>&next=1"},
		{"base64 of a basic auth", "Authorization: Basic " + b64("user:hunter2-long"), "Authorization: Basic <sensitive PASSWORD>"},
		{"base64 of a basic auth with a short value", "Authorization: Basic " + b64("user:42"), "Authorization: Basic <sensitive PIN>"},
		{"base64 of a docker config, in a Secret's data", ".dockerconfigjson: " +
			b64(`{"auths":{"registry.example.com":{"auth":"`+b64("user:hunter2-long")+`"}}}`), ".dockerconfigjson: <sensitive PASSWORD>"},
		{"base64 of a JSON-escaped value", "data: " + b64(`{"v":"\u003ca\u0026b\u003e"}`), "data: <sensitive HTML>"},
		{"base64 on a line of a quoted message", fmt.Sprintf("%q", "auth:\n"+b64("user:hunter2-long")+"\n"), `"auth:\n<sensitive PASSWORD>\n"`},
		{"values that overlap, hidden together", "hunter2-long-tail", "<sensitive PASSWORD>"},
	}
	r := testRedactor()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			if !r.Reveals(tt.in) {
				t.Errorf("Reveals(%q) = false", tt.in)
			}
		})
	}
}

// TestRedactorLeavesOrdinaryText: a short value hides nothing but whole
// words; base64 words are hidden only when what they decode to shows a value.
func TestRedactorLeavesOrdinaryText(t *testing.T) {
	r := testRedactor()
	for _, in := range []string{
		"user admin, 420 replicas, zookeeper-0, x42y, 0x42",
		"Execution of plan deploy finished with status COMPLETE",
		`task deploy: applying StatefulSet zookeeper-instance-zookeeper: admission webhook "validate.kudo.dev" denied the request`,
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:420")),
		"tls.crt: " + base64.StdEncoding.EncodeToString([]byte{0x42, 0, 0x42, 0xff, '4', '2', 0}),
	} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q", in, got)
		}
		if r.Reveals(in) {
			t.Errorf("Reveals(%q) = true", in)
		}
	}
	// Punctuation alone would hide every dash.
	dash := NewRedactor(map[string]string{"SEPARATOR": "-"}, map[string]bool{"SEPARATOR": true})
	if got := dash.String("zookeeper-0 - ready"); got != "zookeeper-0 - ready" {
		t.Errorf("a value of a dash: %q", got)
	}
}

func TestRedactorError(t *testing.T) {
	r := testRedactor()
	if err := r.Error(errors.New("hunter2-long")); err.Error() != "<sensitive PASSWORD>" {
		t.Errorf("Error = %v", err)
	}
	plain := errors.New("nothing to hide")
	if err := r.Error(plain); err != plain {
		t.Errorf("Error made a new error of one that shows nothing: %v", err)
	}
	var none *Redactor
	if none.String("hunter2-long") != "hunter2-long" || none.Error(nil) != nil || none.Reveals("hunter2-long") {
		t.Error("a nil Redactor changes text")
	}
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
