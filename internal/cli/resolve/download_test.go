package resolve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestDownload(t *testing.T) {
	release := make(chan struct{})
	plain := http.NewServeMux()
	body := func(n int64) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = io.CopyN(w, zeros{}, n) }
	}
	plain.HandleFunc("/at-limit", body(maxDownloadSize))
	plain.HandleFunc("/over-limit", body(maxDownloadSize+1))
	plain.HandleFunc("/never-answers", func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	plain.HandleFunc("/body-never-ends", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("a"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	plain.HandleFunc("/loop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		http.Redirect(w, r, "/loop/"+strconv.Itoa(n+1), http.StatusFound)
	})
	plainSrv := httptest.NewServer(plain)
	t.Cleanup(plainSrv.Close)
	secure := http.NewServeMux()
	secure.Handle("/to-http", http.RedirectHandler(plainSrv.URL+"/at-limit", http.StatusFound))
	secure.Handle("/to-https", http.RedirectHandler("/ok", http.StatusFound))
	secure.Handle("/ok", body(1))
	secureSrv := httptest.NewTLSServer(secure)
	t.Cleanup(secureSrv.Close)
	// A listener that accepts connections and says nothing, not even TLS.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			go func() {
				<-release
				_ = conn.Close()
			}()
		}
	}()
	t.Cleanup(func() { close(release) }) // before the servers close, which waits for handlers

	saved := client
	t.Cleanup(func() { client = saved })
	// Short timeouts where a case waits for one, else long enough for a
	// busy machine.
	long := 10 * time.Second
	short := 100 * time.Millisecond
	tests := []struct {
		name        string
		url         string
		timeouts    timeouts
		wantLen     int
		wantErr     string // in the error
		wantTimeout bool
	}{
		{name: "a body at the limit", url: plainSrv.URL + "/at-limit", wantLen: maxDownloadSize},
		{name: "a body one byte over the limit", url: plainSrv.URL + "/over-limit",
			wantErr: "GET " + plainSrv.URL + "/over-limit: the response is over the limit of 16777216 bytes"},
		{name: "a redirect from https to https", url: secureSrv.URL + "/to-https", wantLen: 1},
		{name: "a redirect from https to http", url: secureSrv.URL + "/to-http",
			wantErr: "refusing the redirect from " + secureSrv.URL + "/to-http to " + plainSrv.URL + "/at-limit, which drops https"},
		{name: "too many redirects", url: plainSrv.URL + "/loop/0", wantErr: "stopped after 10 redirects"},
		{name: "a server that never finishes the TLS handshake", url: "https://" + silent.Addr().String() + "/",
			timeouts: timeouts{dial: long, tlsHandshake: short, responseHeader: long, overall: long}, wantTimeout: true},
		{name: "a server that never answers", url: plainSrv.URL + "/never-answers",
			timeouts: timeouts{dial: long, tlsHandshake: long, responseHeader: short, overall: long}, wantTimeout: true},
		{name: "a body that never ends", url: plainSrv.URL + "/body-never-ends",
			timeouts: timeouts{dial: long, tlsHandshake: long, responseHeader: long, overall: short}, wantTimeout: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.timeouts == (timeouts{}) {
				tt.timeouts = timeouts{dial: long, tlsHandshake: long, responseHeader: long, overall: 2 * time.Minute}
			}
			client = newClient(tt.timeouts)
			client.Transport.(*http.Transport).TLSClientConfig = secureSrv.Client().Transport.(*http.Transport).TLSClientConfig
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, err := download(context.Background(), tt.url)
				done <- result{data, err}
			}()
			var got result
			select {
			case got = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("download still waiting after 30s")
			}
			var netErr net.Error
			switch {
			case tt.wantTimeout:
				if !errors.As(got.err, &netErr) || !netErr.Timeout() {
					t.Fatalf("download = %v, want a timeout", got.err)
				}
			case tt.wantErr != "":
				if got.err == nil || !strings.Contains(got.err.Error(), tt.wantErr) {
					t.Fatalf("download = %d bytes, %v; want an error with %q", len(got.data), got.err, tt.wantErr)
				}
			case got.err != nil || len(got.data) != tt.wantLen:
				t.Fatalf("download = %d bytes, %v; want %d bytes", len(got.data), got.err, tt.wantLen)
			}
		})
	}
}
