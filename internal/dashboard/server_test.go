package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// fixed is a Reader of one snapshot, whose changes a test publishes.
type fixed struct {
	snap *Snapshot
	hub  *hub
}

func (f *fixed) Snapshot(context.Context) (*Snapshot, error) { return f.snap, nil }
func (f *fixed) Subscribe(want func(string) bool) (<-chan struct{}, func()) {
	return f.hub.subscribe(want)
}
func (f *fixed) Hidden() []string { return []string{"Rollout"} }

const token = "s3cret"

// userClient is the user's client: it answers the server's questions of
// what the user may do with mayPatch, and refuses patches when not.
func userClient(mayPatch bool, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if review, ok := obj.(*authorizationv1.SelfSubjectAccessReview); ok {
				review.Status.Allowed = mayPatch
				if !mayPatch {
					review.Status.Reason = "no RBAC policy matched"
				}
				return nil
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if !mayPatch {
				return apierrors.NewForbidden(schema.GroupResource{Group: "kudo.dev", Resource: "instances"}, obj.GetName(),
					fmt.Errorf("User %q cannot patch resource", "jane"))
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
}

func testServer(t *testing.T, mayPatch bool) (*Server, *fixed, *httptest.Server) {
	t.Helper()
	snap := fleetSnapshot()
	i := runningInstance()
	snap.Instances = append(snap.Instances, *i)
	snap.OperatorVersions[0] = *operatorVersion()
	reader := &fixed{snap: snap, hub: newHub()}
	s := &Server{Reader: reader, Client: userClient(mayPatch, i.DeepCopy(), operatorVersion()), Token: token, LiveEvery: time.Millisecond}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.Hosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	return s, reader, srv
}

// browser is a client that keeps the dashboard's cookie and does not
// follow redirects.
func browser(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

func get(t *testing.T, c *http.Client, target string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k+1 < len(header); k += 2 {
		req.Header.Set(header[k], header[k+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// signedIn is a browser that opened the URL with the token.
func signedIn(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	c := browser(t, srv)
	res, err := c.Get(srv.URL + "/instances/a/zk?token=" + token + "&x=1")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/instances/a/zk?x=1" {
		t.Fatalf("the token's URL answered %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies = %+v", cookies)
	}
	c.Jar = &jar{cookies: cookies}
	return c
}

type jar struct{ cookies []*http.Cookie }

func (j *jar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *jar) Cookies(*url.URL) []*http.Cookie     { return j.cookies }

func TestTheTokenIsRequired(t *testing.T) {
	_, _, srv := testServer(t, true)
	anonymous := browser(t, srv)
	for _, target := range []string{"/", "/instances/a/zk", "/live", "/static/dashboard.js", "/?token=wrong"} {
		if code, body := get(t, anonymous, srv.URL+target); code != http.StatusForbidden || !strings.Contains(body, "token is missing or wrong") {
			t.Errorf("GET %s without the token: %d %q", target, code, body)
		}
	}
	c := signedIn(t, srv)
	if code, _ := get(t, c, srv.URL+"/"); code != http.StatusOK {
		t.Errorf("GET / with the cookie: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Host = "rebound.example"
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("another Host: %v %v", res.StatusCode, err)
	}
	// An action needs the token in a header too: a form another page posts
	// with the browser's cookie is refused.
	res, err := c.PostForm(srv.URL+"/actions/trigger", url.Values{"namespace": {"a"}, "instance": {"zk"}, "plan": {"backup"}})
	if err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("POST without the header: %v %v", res.StatusCode, err)
	}
}

func TestEachPageRenders(t *testing.T) {
	_, _, srv := testServer(t, true)
	c := signedIn(t, srv)
	for _, tt := range []struct {
		target string
		want   []string
	}{
		{"/", []string{`data-health="attention"`, "1 of 6 Instances Ready", `data-instance="a/broken" data-state="Failed"`,
			"plan deploy failed", "package not verified", `data-rollout="a/zk-next"`, "PlanFailed", "Not shown, as you may not list and watch them here: Rollout"}},
		{"/?state=Running&q=stuck", []string{`data-instance="b/stuck"`, "Instances <span class=\"count\">1 of 6"}},
		{"/instances/a/zk", []string{`data-plan="deploy" data-status="IN_PROGRESS"`, `data-step="app" data-status="IN_PROGRESS"`,
			"Deployment a/zk", "status.readyReplicas = 1", Masked, "@secret:zk-tls/tls.crt", `data-revision="1"`, `id="trigger" `}},
		{"/instances/a/nobody", []string{`data-found="false"`, "does not exist (yet)"}},
		{"/operators/a/zk", []string{"Operator a/zk", "zk-0.2.0", "Unverified"}},
		{"/operatorversions/a/zk-0.1.0", []string{"REPLICAS", "how many", "a/zk</a>", "backup", "not covered by a TrustPolicy"}},
		{"/rollouts/a/zk-next", []string{"Rollout a/zk-next", `data-state="Stalled"`, "canary a/ok failed", `href="/rollouts/a/zk-next/preview"`}},
		{"/rollouts/a/zk-next/preview", []string{"What Rollout a/zk-next would do", "no OperatorVersion zk-0.2.0 of zk is installed beside Instance"}},
		{"/rollouts/a/gone/preview", []string{"Rollout a/gone not found"}},
		{"/static/dashboard.css", []string{"--good"}},
	} {
		code, body := get(t, c, srv.URL+tt.target)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", tt.target, code, body)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", tt.target, w)
			}
		}
	}
	code, fragment := get(t, c, srv.URL+"/instances/a/zk", "X-Dashboard-Fragment", "1")
	if code != http.StatusOK || strings.Contains(fragment, "<html") || !strings.Contains(fragment, `data-plan="deploy"`) {
		t.Errorf("the fragment: %d %.200s", code, fragment)
	}
}

func TestAButtonIsOffAndSaysWhyForAUserWhoMayNot(t *testing.T) {
	_, _, srv := testServer(t, false)
	c := signedIn(t, srv)
	_, body := get(t, c, srv.URL+"/instances/a/zk")
	if !strings.Contains(body, `id="trigger" disabled title="you may not patch instances.kudo.dev in namespace a: no RBAC policy matched"`) {
		t.Errorf("the trigger button is not off with the reason:\n%s", body)
	}
	code, answer := post(t, c, srv.URL+"/actions/trigger", url.Values{"namespace": {"a"}, "instance": {"zk"}, "plan": {"backup"}})
	if code != http.StatusForbidden || answer.OK || !strings.Contains(answer.Message, `cannot patch resource`) {
		t.Errorf("trigger as a user who may not: %d %+v", code, answer)
	}
}

func post(t *testing.T, c *http.Client, target string, form url.Values) (int, actionResult) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Kudo-Token", token)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var answer actionResult
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, answer
}

func TestActionsDoWhatTheVerbsDo(t *testing.T) {
	s, _, srv := testServer(t, true)
	c := signedIn(t, srv)
	code, answer := post(t, c, srv.URL+"/actions/trigger", url.Values{"namespace": {"a"}, "instance": {"zk"}, "plan": {"backup"}})
	if code != http.StatusOK || answer.Message != "plan backup asked for on a/zk" {
		t.Fatalf("trigger: %d %+v", code, answer)
	}
	var i kudov1beta1.Instance
	if err := s.Client.Get(context.Background(), client.ObjectKey{Namespace: "a", Name: "zk"}, &i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.PlanExecution.PlanName != "backup" || i.Spec.PlanExecution.UID == "" {
		t.Errorf("spec.planExecution = %+v", i.Spec.PlanExecution)
	}
	code, answer = post(t, c, srv.URL+"/actions/trigger", url.Values{"namespace": {"a"}, "instance": {"zk"}, "plan": {"nope"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(answer.Message, `plan "nope" is not defined`) {
		t.Errorf("an unknown plan: %d %+v", code, answer)
	}
	code, answer = post(t, c, srv.URL+"/actions/retry", url.Values{"namespace": {"a"}, "instance": {"zk"}})
	if code != http.StatusUnprocessableEntity || answer.OK {
		t.Errorf("retry of a plan that did not fail: %d %+v", code, answer)
	}
	if code, answer = post(t, c, srv.URL+"/actions/explode", url.Values{}); code != http.StatusNotFound {
		t.Errorf("an unknown action: %d %+v", code, answer)
	}
}

func TestALivePageHearsOfItsChangesOnly(t *testing.T) {
	_, reader, srv := testServer(t, true)
	c := signedIn(t, srv)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/live?page=/instances/a/zk", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(res.Body)
	next := func() string {
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "event:") {
				return lines.Text()
			}
		}
		return ""
	}
	// The subscription is made before the stream's first bytes.
	if !lines.Scan() || lines.Text() != "retry: 2000" {
		t.Fatalf("first line %q", lines.Text())
	}
	reader.hub.publish("Instance/a/other")
	reader.hub.publish("Instance/a/zk")
	if got := next(); got != "event: change" {
		t.Fatalf("got %q", got)
	}
	if !lines.Scan() || lines.Text() != "data: 1" {
		t.Errorf("the first change is numbered 1: %q", lines.Text())
	}
}

func TestLiveKeys(t *testing.T) {
	for _, tt := range []struct {
		page, key string
		want      bool
	}{
		{"/", "Instance/x/y", true},
		{"/instances/a/zk", "Instance/a/zk", true},
		{"/instances/a/zk", "Instance/a/zk2", false},
		{"/instances/a/zk", "OperatorVersion/a/zk", false},
		{"/rollouts/a/r", "Instance/a/zk", true},
		{"/rollouts/a/r", "Instance/b/zk", false},
		{"/rollouts/a/r/preview", "Rollout/a/r", false},
	} {
		if got := liveKeys(tt.page)(tt.key); got != tt.want {
			t.Errorf("liveKeys(%s)(%s) = %v", tt.page, tt.key, got)
		}
	}
}

// BenchmarkFleetPage is the fleet page of 1,000 Instances, from the
// snapshot to the HTML: the goal is under a second.
func BenchmarkFleetPage(b *testing.B) {
	snap := &Snapshot{Now: now}
	for k := range 1000 {
		status := []kudov1beta1.ExecutionStatus{kudov1beta1.ExecutionComplete, kudov1beta1.ExecutionInProgress, kudov1beta1.ExecutionFatalError}[k%3]
		ready := metav1.ConditionTrue
		if status != kudov1beta1.ExecutionComplete {
			ready = metav1.ConditionFalse
		}
		i := instance(fmt.Sprintf("team-%d", k%20), fmt.Sprintf("zk-%d", k), status, ready, "Reason")
		snap.Instances = append(snap.Instances, i)
	}
	s := &Server{Reader: &fixed{snap: snap, hub: newHub()}, Token: token, Hosts: []string{"example"}}
	req := httptest.NewRequest(http.MethodGet, "http://example/", nil)
	req.AddCookie(&http.Cookie{Name: s.cookieName(), Value: token})
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "zk-999") {
			b.Fatalf("%d", w.Code)
		}
	}
}

func TestAnInstancePageReadsTheObjectsAPlanAddsAtOnce(t *testing.T) {
	_, reader, srv := testServer(t, true)
	c := signedIn(t, srv)
	i := &reader.snap.Instances[len(reader.snap.Instances)-1]
	inventory := i.Status.Inventory
	i.Status.Inventory = inventory[:1]
	if _, body := get(t, c, srv.URL+"/instances/a/zk"); strings.Count(body, "data-object=") != 2 {
		t.Fatalf("the first task's two objects are not shown:\n%s", body)
	}
	i.Status.Inventory = inventory
	if _, body := get(t, c, srv.URL+"/instances/a/zk"); strings.Count(body, "data-object=") != 3 || !strings.Contains(body, `data-object="Deployment/zk"`) {
		t.Errorf("the object the next task applied is not read:\n%s", body)
	}
}

func TestAnInstanceOfAnotherClusterNamesItAndReadsNoObjectHere(t *testing.T) {
	_, reader, srv := testServer(t, true)
	c := signedIn(t, srv)
	i := &reader.snap.Instances[len(reader.snap.Instances)-1]
	i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod"}}
	_, body := get(t, c, srv.URL+"/instances/a/zk")
	if !strings.Contains(body, "acts on cluster prod:value") {
		t.Errorf("the page does not name the cluster:\n%s", body)
	}
	if n := strings.Count(body, "in cluster prod:value, which the dashboard does not read"); n != 3 {
		t.Errorf("%d of 3 objects say they are in the other cluster:\n%s", n, body)
	}
}

// What a tenant writes — names, messages, parameters, an Operator's URL —
// is text in the pages, never markup or a script's link.
func TestWhatATenantWritesIsEscaped(t *testing.T) {
	_, reader, srv := testServer(t, true)
	script := `<script>alert(1)</script>`
	reader.snap.Events[0].Message = script
	reader.snap.Instances[0].Status.Conditions[0].Message = script
	last := &reader.snap.Instances[len(reader.snap.Instances)-1]
	last.Spec.Parameters["REPLICAS"] = script
	reader.snap.Operators[0].Spec.URL = "javascript:alert(1)"
	c := signedIn(t, srv)
	for _, target := range []string{"/", "/instances/a/zk", "/operators/a/zk"} {
		_, body := get(t, c, srv.URL+target)
		if strings.Contains(body, script) || strings.Contains(body, `href="javascript:`) {
			t.Errorf("GET %s renders what a tenant wrote as markup:\n%s", target, body)
		}
	}
	if _, body := get(t, c, srv.URL+"/instances/a/zk"); !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the parameter's value is not shown as text")
	}
}
