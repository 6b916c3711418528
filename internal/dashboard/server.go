package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/cli/action"
)

//go:embed templates static
var assets embed.FS

// Reader is where the pages read from: the informers (Source) in the
// dashboard, a fixed snapshot in tests.
type Reader interface {
	Snapshot(ctx context.Context) (*Snapshot, error)
	Subscribe(want func(key string) bool) (<-chan struct{}, func())
	Hidden() []string
}

// Server serves the pages and the actions. Every request needs the token:
// once in the URL, which sets it as a cookie of this dashboard only.
type Server struct {
	Reader Reader
	// Client acts as the user: the actions, the objects an Instance page
	// reads, the questions of what the user may do.
	Client client.Client
	Token  string
	// Hosts are the Host headers the server answers to (its address and
	// port, by name and number): a page of another site that made its
	// name resolve to loopback gets nothing.
	Hosts []string
	// LiveEvery is the least time between two changes sent to a page.
	LiveEvery time.Duration
	// Capabilities are what Helm charts' .Capabilities say of the cluster,
	// in previews; nil: Helm's defaults.
	Capabilities func() (*chartrender.Capabilities, error)

	pages   map[string]*template.Template
	routes  *http.ServeMux
	once    sync.Once
	mu      sync.Mutex
	objects map[string]cachedObjects
	refusal map[string]cachedRefusal
}

// cachedObjects are the objects an Instance page read, and of which
// inventory: a plan that applies more reads them again.
type cachedObjects struct {
	at   time.Time
	refs []kudov1beta1.ObjectRef
	live []Live
}

type cachedRefusal struct {
	at     time.Time
	reason string
}

// objectsTTL is how long an Instance page reuses the objects it read: the
// plan tree's changes come from the watch as often as they come, the
// objects' reads at most this often.
const objectsTTL = 5 * time.Second

// NewToken is a random token for a dashboard's URL.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// HostsOf are the Host headers a server listening on addr answers to.
func HostsOf(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return []string{addr.String()}
	}
	port := strconv.Itoa(tcp.Port)
	hosts := []string{net.JoinHostPort(tcp.IP.String(), port)}
	if tcp.IP.IsLoopback() {
		hosts = append(hosts, net.JoinHostPort("localhost", port))
	}
	return hosts
}

func (s *Server) cookieName() string {
	return "kudo-dashboard-" + strings.NewReplacer(":", "-", ".", "-", "[", "", "]", "").Replace(s.Hosts[0])
}

// ServeHTTP checks the Host and the token, then serves the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(s.init)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !s.knownHost(r.Host) {
		http.Error(w, "kudo-ng dashboard: unknown Host "+r.Host, http.StatusForbidden)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet {
		if !s.valid(t) {
			s.refuse(w)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del("token")
		target := r.URL.Path
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	cookie, err := r.Cookie(s.cookieName())
	if err != nil || !s.valid(cookie.Value) {
		s.refuse(w)
		return
	}
	// An action needs the token in a header as well, which only the
	// dashboard's own pages can send.
	if r.Method != http.MethodGet && !s.valid(r.Header.Get("X-Kudo-Token")) {
		s.refuse(w)
		return
	}
	s.routes.ServeHTTP(w, r)
}

func (s *Server) knownHost(host string) bool {
	for _, h := range s.Hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

func (s *Server) valid(token string) bool {
	return s.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.Token)) == 1
}

func (s *Server) refuse(w http.ResponseWriter) {
	http.Error(w, "kudo-ng dashboard: open it with the URL kubectl kudo dashboard printed; its token is missing or wrong",
		http.StatusForbidden)
}

func (s *Server) newRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServer(http.FS(static))))
	mux.HandleFunc("GET /{$}", s.fleet)
	mux.HandleFunc("GET /instances/{namespace}/{name}", s.instance)
	mux.HandleFunc("GET /operators/{namespace}/{name}", s.operator)
	mux.HandleFunc("GET /operatorversions/{namespace}/{name}", s.operatorVersion)
	mux.HandleFunc("GET /rollouts/{namespace}/{name}", s.rollout)
	mux.HandleFunc("GET /rollouts/{namespace}/{name}/preview", s.rolloutPreview)
	mux.HandleFunc("GET /live", s.live)
	mux.HandleFunc("POST /actions/{verb}", s.act)
	return mux
}

func (s *Server) init() {
	if s.LiveEvery == 0 {
		s.LiveEvery = 250 * time.Millisecond
	}
	s.objects, s.refusal = map[string]cachedObjects{}, map[string]cachedRefusal{}
	s.routes = s.newRoutes()
	funcs := template.FuncMap{
		"statusClass":    StatusClass,
		"stateClass":     StateClass,
		"conditionClass": ConditionClass,
		"ready":          ReadyOf,
		"tasks":          joinTasks,
		"join":           strings.Join,
		"healthClass":    HealthClass,
		"plural":         Plural,
	}
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html"))
	s.pages = map[string]*template.Template{}
	for _, page := range []string{"fleet", "instance", "operator", "operatorversion", "rollout", "preview"} {
		s.pages[page] = template.Must(template.Must(layout.Clone()).ParseFS(assets, "templates/"+page+".html"))
	}
}

// page is what the layout renders around a page's content.
type page struct {
	Title  string
	Token  string
	Hidden []string
	// Fleet is the fleet page's filter, shown above its content.
	Fleet *Fleet
	Data  any
}

// render writes the page, or its content alone when the page's script
// asks for it to refresh in place.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	p := page{Title: title, Token: s.Token, Hidden: s.Reader.Hidden(), Data: data}
	if f, ok := data.(*Fleet); ok {
		p.Fleet = f
	}
	tmpl := "layout.html"
	if r.Header.Get("X-Dashboard-Fragment") != "" {
		tmpl = "content"
	}
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, tmpl, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = b.WriteTo(w)
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) *Snapshot {
	snap, err := s.Reader.Snapshot(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil
	}
	return snap
}

func (s *Server) fleet(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	q := r.URL.Query()
	f := FleetOf(snap, Filter{State: q.Get("state"), Query: q.Get("q"), EventType: q.Get("type")})
	s.render(w, r, "fleet", "Fleet", f)
}

func (s *Server) instance(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	i, ov := snap.Instance(ns, name)
	var live []Live
	refusal := ""
	if i != nil {
		live = s.liveObjects(r.Context(), i)
		refusal = s.refusalOf(r.Context(), ns)
	}
	p := InstanceOf(ns, name, i, ov, live, snap.EventsOf("Instance", ns, name), snap.Now, refusal)
	s.render(w, r, "instance", "Instance "+ns+"/"+name, p)
}

func (s *Server) operator(w http.ResponseWriter, r *http.Request) {
	if snap := s.snapshot(w, r); snap != nil {
		p := OperatorOf(snap, r.PathValue("namespace"), r.PathValue("name"))
		s.render(w, r, "operator", "Operator "+p.Namespace+"/"+p.Name, p)
	}
}

func (s *Server) operatorVersion(w http.ResponseWriter, r *http.Request) {
	if snap := s.snapshot(w, r); snap != nil {
		p := OperatorVersionOf(snap, r.PathValue("namespace"), r.PathValue("name"))
		s.render(w, r, "operatorversion", "OperatorVersion "+p.Namespace+"/"+p.Name, p)
	}
}

func (s *Server) rollout(w http.ResponseWriter, r *http.Request) {
	if snap := s.snapshot(w, r); snap != nil {
		p := RolloutOf(snap, r.PathValue("namespace"), r.PathValue("name"))
		s.render(w, r, "rollout", "Rollout "+p.Namespace+"/"+p.Name, p)
	}
}

// PreviewPage is what a change would do, as kubectl kudo prints it.
type PreviewPage struct {
	Title string
	Back  Link
	Text  string
	Err   string
}

// rolloutPreview is kubectl kudo rollout preview NAME --diff: the waves the
// Rollout would plan now and what each Instance's upgrade would change, as
// the API server answers the user's dry runs. It is read when asked for, not
// as the cluster changes.
func (s *Server) rolloutPreview(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p := &PreviewPage{Title: "What Rollout " + ns + "/" + name + " would do", Back: Link{Text: "Rollout " + name, Href: RolloutHref(ns, name)}}
	ro := snap.Rollout(ns, name)
	if ro == nil {
		p.Err = "Rollout " + ns + "/" + name + " not found"
	} else {
		var out bytes.Buffer
		cfg := action.Config{Client: s.Client, Namespace: ns, Out: &out, ErrOut: &out, Capabilities: s.Capabilities}
		waves, err := action.PreviewRollout(r.Context(), cfg, ro)
		if err == nil {
			err = (&action.PreviewOptions{Diff: true}).PrintRollout(&out, waves)
		}
		if err != nil && !errors.Is(err, action.ErrWouldChange) {
			p.Err = err.Error()
		}
		p.Text = out.String()
	}
	s.render(w, r, "preview", p.Title, p)
}

// liveObjects reads the objects of i's inventory (at most MaxObjects) as
// the user, at most once per objectsTTL for the same Instance.
func (s *Server) liveObjects(ctx context.Context, i *kudov1beta1.Instance) []Live {
	key := string(i.UID)
	refs := Refs(i, MaxObjects)
	s.mu.Lock()
	cached, ok := s.objects[key]
	s.mu.Unlock()
	if ok && time.Since(cached.at) < objectsTTL && slices.Equal(cached.refs, refs) {
		return cached.live
	}
	live := make([]Live, 0, len(refs))
	elsewhere := ""
	if kc := i.Spec.KubeConfig; kc != nil {
		// The user's rights there are not the dashboard's to know: what the
		// Instance's status records is all it shows.
		elsewhere = "in cluster " + kc.String() + ", which the dashboard does not read"
	}
	for _, ref := range refs {
		if elsewhere != "" {
			live = append(live, Live{Ref: ref, Err: elsewhere})
			continue
		}
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(ref.APIVersion)
		obj.SetKind(ref.Kind)
		l := Live{Ref: ref, Object: obj}
		switch err := s.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); {
		case apierrors.IsNotFound(err):
			l.Object = nil
		case err != nil:
			l.Object, l.Err = nil, err.Error()
		}
		live = append(live, l)
	}
	s.mu.Lock()
	s.objects[key] = cachedObjects{at: time.Now(), refs: refs, live: live}
	s.mu.Unlock()
	return live
}

// refusalOf says why the user may not act on the Instances of ns — ask
// for a plan, cancel, retry, roll back all patch an Instance — or "" when
// they may; the answer is kept a while as the objects are.
func (s *Server) refusalOf(ctx context.Context, ns string) string {
	s.mu.Lock()
	cached, ok := s.refusal[ns]
	s.mu.Unlock()
	if ok && time.Since(cached.at) < objectsTTL {
		return cached.reason
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: kudov1beta1.GroupVersion.Group, Resource: "instances",
			Verb: "patch", Namespace: ns},
	}}
	reason := ""
	switch err := s.Client.Create(ctx, review); {
	case err != nil:
		reason = "cannot ask the API server whether you may: " + err.Error()
	case !review.Status.Allowed:
		reason = fmt.Sprintf("you may not patch instances.kudo.dev in namespace %s", ns)
		if review.Status.Reason != "" {
			reason += ": " + review.Status.Reason
		}
	}
	s.mu.Lock()
	s.refusal[ns] = cachedRefusal{at: time.Now(), reason: reason}
	s.mu.Unlock()
	return reason
}

// liveKeys says which changes a page hears of: the fleet all; an Instance
// its own and its events; the others what is in their namespace.
func liveKeys(path string) func(string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch len(parts) {
	case 1:
		return func(string) bool { return true }
	case 3:
	default:
		// A preview is read when asked for.
		return func(string) bool { return false }
	}
	kind, ns, name := parts[0], parts[1], parts[2]
	if kind == "instances" {
		own := "Instance/" + ns + "/" + name
		return func(key string) bool { return key == own }
	}
	return func(key string) bool {
		k := strings.SplitN(key, "/", 3)
		return len(k) == 3 && k[1] == ns
	}
}

// live tells the page, as server-sent events, each time what it shows
// changed — from the informers, never from a read of the API server.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	changes, cancel := s.Reader.Subscribe(liveKeys(r.URL.Query().Get("page")))
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "retry: 2000\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for n := 1; ; {
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		case <-changes:
			_, _ = fmt.Fprintf(w, "event: change\ndata: %d\n\n", n)
			n++
			flusher.Flush()
			// Changes that come while this wait are sent as one.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(s.LiveEvery):
			}
			continue
		}
		flusher.Flush()
	}
}

// actionResult is what an action answers the page.
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// act does what the CLI verb of the same name does, as the user: trigger,
// cancel, retry, rollback.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.answer(w, http.StatusBadRequest, err.Error())
		return
	}
	ns, instance := r.PostForm.Get("namespace"), r.PostForm.Get("instance")
	var out bytes.Buffer
	cfg := action.Config{Client: s.Client, Namespace: ns, Out: &out, ErrOut: &out, Capabilities: s.Capabilities}
	req := &action.PlanRequest{Instance: instance, Plan: r.PostForm.Get("plan")}
	var done string
	var err error
	switch verb := r.PathValue("verb"); verb {
	case "trigger":
		_, err = req.Trigger(r.Context(), cfg)
		done = fmt.Sprintf("plan %s asked for on %s/%s", req.Plan, ns, instance)
	case "cancel":
		_, err = req.Cancel(r.Context(), cfg)
		done = fmt.Sprintf("the plan of %s/%s cancelled", ns, instance)
	case "retry":
		_, err = req.Retry(r.Context(), cfg)
		done = fmt.Sprintf("the failed plan of %s/%s retried", ns, instance)
	case "rollback":
		rb := &action.Rollback{Instance: instance}
		if rev := r.PostForm.Get("revision"); rev != "" {
			if rb.Revision, err = strconv.ParseInt(rev, 10, 64); err != nil {
				s.answer(w, http.StatusBadRequest, "revision: "+err.Error())
				return
			}
		}
		var target *kudov1beta1.Revision
		if _, target, err = rb.Run(r.Context(), cfg); err == nil {
			done = fmt.Sprintf("%s/%s rolled back to revision %d", ns, instance, target.Number)
		}
	default:
		s.answer(w, http.StatusNotFound, "no action "+verb)
		return
	}
	if err != nil {
		code := http.StatusUnprocessableEntity
		if apierrors.IsForbidden(err) {
			code = http.StatusForbidden
		}
		s.answer(w, code, err.Error())
		return
	}
	s.answer(w, http.StatusOK, done)
}

func (s *Server) answer(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(actionResult{OK: code == http.StatusOK, Message: message})
}
