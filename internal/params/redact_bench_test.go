package params

import (
	"encoding/base64"
	"strings"
	"testing"
)

// BenchmarkRedactor measures what every event and step message of an
// Instance with sensitive parameters pays: a typical message, and a long
// one with a Secret's data (a certificate) in it.
func BenchmarkRedactor(b *testing.B) {
	r := NewRedactor(map[string]string{"PASSWORD": "hunter2-correct-horse", "TOKEN": "9f86d081884c7d659a2feaa0c55ad015", "PIN": "4711", "USER": "admin"},
		map[string]bool{"PASSWORD": true, "TOKEN": true, "PIN": true})
	short := `task deploy: applying StatefulSet zookeeper-instance-zookeeper: admission webhook "validate.kudo.dev" denied the request: ` +
		`spec.template.spec.containers[0].image: Invalid value: "zookeeper:3.4.14"`
	cert := make([]byte, 1200)
	for i := range cert {
		cert[i] = byte(i * 7)
	}
	var long strings.Builder
	long.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: zookeeper-instance-tls\n  namespace: default\n  labels:\n" +
		"    kudo.dev/instance: zookeeper-instance\n    kudo.dev/operator: zookeeper\n    heritage: kudo\ntype: kubernetes.io/tls\ndata:\n  tls.crt: ")
	long.WriteString(base64.StdEncoding.EncodeToString(cert))
	long.WriteString("\n---\n")
	for long.Len() < 4096 {
		long.WriteString(short)
		long.WriteString("\n")
	}
	for _, bm := range []struct{ name, text string }{{"200B", short}, {"4KiB", long.String()[:4096]}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(bm.text)))
			b.ReportAllocs()
			for b.Loop() {
				if r.String(bm.text) != bm.text {
					b.Fatal("redacted what holds no sensitive value")
				}
			}
		})
	}
}
