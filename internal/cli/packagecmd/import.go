package packagecmd

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/chartimport"
	"github.com/kudo-ng/kudo/internal/packages"
)

func newImportCmd(streams genericiooptions.IOStreams) *cobra.Command {
	var dir string
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "import CHART",
		Short: "Write a package that runs a Helm chart (a directory or a .tgz) as a Helm task, its values as parameters",
		Example: `  kubectl kudo package import ./charts/web --directory web-operator
  kubectl kudo package import web-1.2.3.tgz`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			files, err := chartimport.Package(args[0])
			if err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join(".", "operator")
			}
			if _, err := os.Stat(dir); err == nil && !overwrite {
				return fmt.Errorf("%s exists: choose another --directory, or pass --overwrite", dir)
			}
			for _, name := range slices.Sorted(maps.Keys(files)) {
				path := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, files[name], 0o644); err != nil {
					return err
				}
			}
			p, err := packages.Read(dir)
			if err != nil {
				return err
			}
			if report := packages.Verify(p, packages.VerifyOptions{}); len(report.Errors) > 0 {
				errs := []error{fmt.Errorf("the package written in %s does not verify", dir)}
				for _, issue := range report.Errors {
					errs = append(errs, errors.New(issue.String()))
				}
				return errors.Join(errs...)
			}
			_, err = fmt.Fprintf(streams.Out, "package %s %s written in %s: %d parameters from the chart's values\n",
				p.Operator.Name, p.Operator.OperatorVersion, dir, len(p.Params.Parameters))
			return err
		},
	}
	cmd.Flags().StringVarP(&dir, "directory", "d", "", "Directory of the package (default ./operator)")
	cmd.Flags().BoolVarP(&overwrite, "overwrite", "w", false, "Overwrite an existing directory's package files")
	return cmd
}
