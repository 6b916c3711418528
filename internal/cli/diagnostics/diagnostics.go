// Package diagnostics is `kubectl kudo diagnostics collect`: an Instance,
// its package, the objects it owns, their events and the manager's logs,
// written to a directory to attach to a bug report.
package diagnostics

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/params"
)

// Options are the flags of diagnostics collect.
type Options struct {
	Instance  string
	Directory string
	// LogSince keeps only the logs newer than it; all when zero.
	LogSince time.Duration
}

// ownedKinds are the kinds looked for by the Instance's label.
var ownedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "PersistentVolumeClaim"}, {Version: "v1", Kind: "ServiceAccount"},
	{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, {Group: "kudo.dev", Version: "v1beta1", Kind: "Instance"},
}

// NewCmd returns the diagnostics command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "diagnostics", Short: "Collect what is needed to understand an Instance's trouble"}
	opts := &Options{}
	collect := &cobra.Command{
		Use:   "collect --instance NAME",
		Short: "Write the Instance, its package, its objects, events and the manager's logs to a directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return err
			}
			clientset, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, clientset, ns, streams, opts)
		},
	}
	clientutil.InstanceFlag(collect, &opts.Instance, flags)
	collect.Flags().StringVarP(&opts.Directory, "output-directory", "O", "", "Where to write (default diag/<instance>-<time>)")
	collect.Flags().DurationVar(&opts.LogSince, "log-since", 0,
		"Only return logs newer than a relative duration like 5s, 2m, or 3h. Defaults to all logs.")
	cmd.AddCommand(collect)
	return cmd
}

// Run writes the diagnostics; Secrets are written without their data, and
// the values of sensitive parameters are hidden in every file.
func Run(
	ctx context.Context, c client.Client, clientset kubernetes.Interface, ns string, streams genericiooptions.IOStreams, opts *Options,
) error {
	dir := opts.Directory
	if dir == "" {
		dir = filepath.Join("diag", fmt.Sprintf("%s-%s", opts.Instance, time.Now().UTC().Format("20060102-150405")))
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: opts.Instance}, i); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return fmt.Errorf("instance %s not found in namespace %s", opts.Instance, ns)
		}
		return err
	}
	if err := clientutil.ReadRecord(ctx, c, i); err != nil {
		return err
	}
	ov := &kudov1beta1.OperatorVersion{}
	if err := c.Get(ctx, i.OperatorVersionKey(), ov); err != nil {
		ov = nil
	}
	w := &writer{dir: dir, redactor: sensitiveValues(ctx, c, i, ov)}
	w.write("instance.yaml", i)
	if ov != nil {
		w.write("operatorversion.yaml", ov)
	}
	for _, gvk := range ownedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{kudov1beta1.InstanceLabel: i.Name}); err != nil {
			continue // a kind the cluster does not serve
		}
		for k := range list.Items {
			obj := &list.Items[k]
			if gvk.Kind == "Secret" {
				unstructured.RemoveNestedField(obj.Object, "data")
				unstructured.RemoveNestedField(obj.Object, "stringData")
			}
			w.write(filepath.Join("objects", strings.ToLower(gvk.Kind)+"-"+obj.GetName()+".yaml"), obj.Object)
		}
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err == nil {
		w.write("events.yaml", events.Items)
	}
	w.managerLogs(ctx, clientset, opts.LogSince)
	if w.err != nil {
		return w.err
	}
	_, err := fmt.Fprintf(streams.Out, "diagnostics of Instance %s written to %s (%d files)\n", i.Name, dir, w.files)
	return err
}

type writer struct {
	dir      string
	redactor *params.Redactor
	files    int
	err      error
}

// sensitiveValues hides the values of the Instance's sensitive parameters:
// those of its spec, the defaults, and the Secret keys it reads, as far as
// whoever collects may read them.
func sensitiveValues(ctx context.Context, c client.Client, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) *params.Redactor {
	var defs []kudov1beta1.Parameter
	if ov != nil {
		defs = ov.Spec.Parameters
	}
	values := params.WithDefaults(defs, i.Spec.Parameters)
	for name, ref := range i.Spec.SecretParameters {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: i.Namespace, Name: ref.Name}, secret); err == nil {
			values[name] = string(secret.Data[ref.Key])
		}
	}
	return params.NewRedactor(values, params.Sensitive(defs, i.Spec.SecretParameters))
}

func (w *writer) write(name string, v any) {
	if w.err != nil {
		return
	}
	data, err := yaml.Marshal(v)
	if err == nil {
		err = w.writeBytes(name, data)
	}
	w.err = err
}

func (w *writer) writeBytes(name string, data []byte) error {
	path := filepath.Join(w.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	w.files++
	return os.WriteFile(path, []byte(w.redactor.String(string(data))), 0o644)
}

// managerLogs saves the logs of the manager pods, when the manager runs in
// the cluster (config/default's labels).
func (w *writer) managerLogs(ctx context.Context, clientset kubernetes.Interface, since time.Duration) {
	pods, err := clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: "control-plane=controller-manager,app.kubernetes.io/name=kudo-ng",
	})
	if err != nil || len(pods.Items) == 0 {
		w.err = w.writeBytes("manager.log", []byte("no kudo-ng manager pod found in the cluster: "+
			"a manager run outside it (make run) logs to its own terminal\n"))
		return
	}
	logOptions := &corev1.PodLogOptions{Container: "manager"}
	if since > 0 {
		logOptions.SinceSeconds = ptr.To(int64(since.Seconds()))
	}
	for _, pod := range pods.Items {
		stream, err := clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, logOptions).Stream(ctx)
		var logs []byte
		if err == nil {
			logs, err = io.ReadAll(stream)
			_ = stream.Close()
		}
		if err != nil {
			logs = []byte("reading the logs failed: " + err.Error() + "\n")
		}
		if w.err = w.writeBytes(filepath.Join("manager", pod.Name+".log"), logs); w.err != nil {
			return
		}
	}
}
