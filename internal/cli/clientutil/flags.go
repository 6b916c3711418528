package clientutil

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// InstanceFlag adds --instance, required and completed with the namespace's
// Instances: the flag of the verbs that act on an existing Instance.
func InstanceFlag(cmd *cobra.Command, instance *string, flags *genericclioptions.ConfigFlags) {
	cmd.Flags().StringVar(instance, "instance", "", "The Instance")
	_ = cmd.MarkFlagRequired("instance")
	_ = cmd.RegisterFlagCompletionFunc("instance", CompleteInstances(flags))
}

// ParameterFlags adds -p and -P, the parameter flags of install, update and upgrade.
func ParameterFlags(f *pflag.FlagSet, values, files *[]string) {
	f.StringArrayVarP(values, "parameter", "p", nil,
		"Parameter: NAME=VALUE, NAME=[a,b] or NAME={k1:v1,k2:v2}; NAME=@secret:SECRET/KEY takes the value from a Secret's key")
	f.StringArrayVarP(files, "parameter-file", "P", nil, "YAML file of parameter values")
}

// RepoFlag adds --repo, where install and upgrade look packages up by name.
func RepoFlag(f *pflag.FlagSet, repo *string) {
	f.StringVar(repo, "repo", "", "Repository (URL, or name of kubectl kudo repo add) packages are looked up in by name "+
		"(default: the one in use)")
}

// WaitFlags adds --wait, whose help says what the verb waits for, and
// --wait-time.
func WaitFlags(f *pflag.FlagSet, wait *bool, waitTime *time.Duration, help string) {
	f.BoolVar(wait, "wait", false, help)
	*waitTime = 5 * time.Minute
	f.Var((*seconds)(waitTime), "wait-time", "How long --wait waits: seconds, as KUDO took them (300), or a duration (5m)")
}

// seconds is a duration flag that takes KUDO's whole seconds too.
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }

func (s *seconds) Set(value string) error {
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		*s = seconds(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return fmt.Errorf("%q is neither seconds (300) nor a duration (5m)", value)
	}
	*s = seconds(d)
	return nil
}

func (*seconds) Type() string { return "duration" }

// ReplaceFlag adds --replace-operator-version, of install and upgrade.
func ReplaceFlag(f *pflag.FlagSet, replace *bool) {
	f.BoolVar(replace, "replace-operator-version", false, "Replace an installed OperatorVersion of the package's name "+
		"but other content, if no Instance uses it (without the flag such a package is refused: bump its operatorVersion instead)")
}
