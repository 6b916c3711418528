package main

import (
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kudo-ng/kudo/internal/apimetrics"
)

// apiCounter is a reverse proxy to the API server that counts the requests
// passing through it by verb and resource, discovery included, as the
// manager's kudo_ng_api_requests_total does (apimetrics.Classify): what a
// peer spends, whatever client it is built on.
type apiCounter struct {
	server   *http.Server
	listener net.Listener
	mu       sync.Mutex
	calls    apiCalls
}

// startAPICounter serves the proxy on a port of its own, speaking to the
// API server as cfg does.
func startAPICounter(cfg *rest.Config) (*apiCounter, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &apiCounter{listener: listener, calls: apiCalls{}}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		// Watches stream.
		FlushInterval: -1,
	}
	a.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb, resource := apimetrics.Classify(r)
		a.count(apiCall{verb, resource})
		proxy.ServeHTTP(w, r)
	})}
	go func() {
		if err := a.server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("API counter: %v", err)
		}
	}()
	return a, nil
}

func (a *apiCounter) count(call apiCall) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[call]++
}

// snapshot is what was counted so far.
func (a *apiCounter) snapshot() apiCalls {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.calls)
}

// writeKubeconfig writes a kubeconfig that speaks to the API server through
// the proxy, with no credentials of its own: the proxy's are the cluster
// admin's.
func (a *apiCounter) writeKubeconfig(dir string) (string, error) {
	path := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["counted"] = &clientcmdapi.Cluster{Server: "http://" + a.listener.Addr().String()}
	cfg.AuthInfos["counted"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["counted"] = &clientcmdapi.Context{Cluster: "counted", AuthInfo: "counted"}
	cfg.CurrentContext = "counted"
	return path, clientcmd.WriteToFile(*cfg, path)
}

func (a *apiCounter) stop() { _ = a.server.Close() }
