// Package dashboardcmd is `kubectl kudo dashboard` (kudo-ng): the
// dashboard's web server on this machine, reading the cluster as the user.
package dashboardcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/dashboard"
)

// Options are the flags of dashboard.
type Options struct {
	Address string
	Port    int
	NoOpen  bool
}

// NewCmd returns the dashboard command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Show the fleet, each Instance's plans as they run, history and drift in a browser (kudo-ng)",
		Long: `Start the dashboard on this machine and open it in the browser: the fleet's health, what
needs attention and why, each Instance's plan tree updating as it runs, its objects, history
and events, the Operators and their versions, the rollouts.

It reads the cluster with your kubeconfig, so it shows what you may see and does what you may
do — run a plan, cancel, retry, roll back — and needs no rights of its own in the cluster.
It watches every namespace when you may list Instances in all of them, else the namespace of
-n or your context. The URL it prints carries a token: the dashboard answers nothing without
it. Stop it with Ctrl-C.`,
		Example: `  kubectl kudo dashboard
  kubectl kudo dashboard -n team-a --port 8080 --no-open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), streams, flags, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Address, "address", "127.0.0.1", "The address to listen on")
	f.IntVar(&opts.Port, "port", 0, "The port to listen on (default: a free one)")
	f.BoolVar(&opts.NoOpen, "no-open", false, "Print the URL and do not open a browser")
	return cmd
}

// Run serves the dashboard until ctx ends.
func Run(ctx context.Context, streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags, opts *Options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The watches log through controller-runtime, as klog (-v) says.
	log.SetLogger(klog.NewKlogr())
	c, ns, err := clientutil.New(flags)
	if err != nil {
		return err
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return err
	}
	scope, err := dashboard.Scope(ctx, c, ns)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(opts.Address, strconv.Itoa(opts.Port)))
	if err != nil {
		return fmt.Errorf("--address %s --port %d: %w", opts.Address, opts.Port, err)
	}
	defer func() { _ = listener.Close() }()
	source, err := dashboard.NewSource(ctx, cfg, c, scope)
	if err != nil {
		return err
	}
	token, err := dashboard.NewToken()
	if err != nil {
		return err
	}
	server := &dashboard.Server{Reader: source, Client: c, Token: token, Hosts: dashboard.HostsOf(listener.Addr()),
		Capabilities: action.CapabilitiesOf(flags)}
	where := "all namespaces"
	if scope != "" {
		where = "namespace " + scope
	}
	link := (&url.URL{Scheme: "http", Host: server.Hosts[0], Path: "/", RawQuery: "token=" + token}).String()
	_, _ = fmt.Fprintf(streams.Out, "The dashboard of %s is at %s (Ctrl-C stops it)\n", where, link)
	if !opts.NoOpen {
		if err := open(link); err != nil {
			_, _ = fmt.Fprintf(streams.ErrOut, "Open the URL in a browser: %v\n", err)
		}
	}
	httpServer := &http.Server{Handler: server, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = httpServer.Shutdown(shutdown)
	}()
	if err := httpServer.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// open opens link in the desktop's browser.
func open(link string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		cmd = exec.Command("xdg-open", link)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
