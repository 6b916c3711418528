package clientutil

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// CompleteInstances completes --instance with the names of the namespace's
// Instances.
func CompleteInstances(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		c, ns, err := New(flags)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list := &kudov1beta1.InstanceList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, i := range list.Items {
			if strings.HasPrefix(i.Name, prefix) {
				names = append(names, i.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteParameters completes -p with NAME= for the parameters of the
// OperatorVersion of the Instance named by --instance.
func CompleteParameters(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		instance, _ := cmd.Flags().GetString("instance")
		c, ns, err := New(flags)
		if err != nil || instance == "" {
			return nil, cobra.ShellCompDirectiveError
		}
		_, ov, err := GetInstance(context.Background(), c, ns, instance)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, p := range ov.Spec.Parameters {
			if strings.HasPrefix(p.Name, prefix) {
				names = append(names, p.Name+"=")
			}
		}
		return names, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
}
