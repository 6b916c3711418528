package chartimport

import (
	"fmt"
	"os"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

// minimumKubernetes is the kubernetesVersion of an imported package, as
// `kubectl kudo package new` writes it: a chart's kubeVersion is a
// constraint, which the Helm task's render checks.
const minimumKubernetes = "1.20.0"

// ValuesTemplateName is the template of the values an imported package
// passes its chart.
const ValuesTemplateName = "values.yaml"

// Package is the KUDO package that runs a chart, as its files by path: a
// Helm task of the chart, in deploy and update plans; the chart's values as
// parameters (Parameters), each change of one running update; the template
// of the values; the chart itself under charts/, as it was given (a
// tarball, or a directory).
func Package(chartPath string) (map[string][]byte, error) {
	chart, err := loader.Load(chartPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", chartPath, err)
	}
	md := chart.Metadata
	var values, schema []byte
	for _, f := range chart.Raw {
		switch f.Name {
		case "values.yaml":
			values = f.Data
		case "values.schema.json":
			schema = f.Data
		}
	}
	params, err := Parameters(values, schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", chartPath, err)
	}
	for n := range params {
		params[n].Trigger = "update"
	}
	operator := packages.OperatorFile{
		APIVersion: packages.APIVersion, Name: md.Name, Description: md.Description,
		OperatorVersion: md.Version, AppVersion: md.AppVersion, URL: md.Home, KubernetesVersion: minimumKubernetes,
		Tasks: []kudov1beta1.Task{{Name: md.Name, Kind: kudov1beta1.HelmTaskKind,
			Spec: kudov1beta1.TaskSpec{HelmTaskSpec: kudov1beta1.HelmTaskSpec{Chart: md.Name, Values: ValuesTemplateName}}}},
		Plans: map[string]kudov1beta1.Plan{"deploy": chartPlan(md.Name), "update": chartPlan(md.Name)},
	}
	files := map[string][]byte{}
	if files[packages.OperatorFileName], err = yaml.Marshal(operator); err != nil {
		return nil, err
	}
	paramsFile := packages.ParamsFile{APIVersion: packages.APIVersion, Parameters: params}
	if files[packages.ParamsFileName], err = yaml.Marshal(paramsFile); err != nil {
		return nil, err
	}
	files[packages.TemplatesDir+ValuesTemplateName] = []byte(ValuesTemplate(params))
	if err := addChart(files, chartPath, chart); err != nil {
		return nil, err
	}
	return files, nil
}

func chartPlan(task string) kudov1beta1.Plan {
	return kudov1beta1.Plan{Strategy: kudov1beta1.Serial, Phases: []kudov1beta1.Phase{{Name: task, Strategy: kudov1beta1.Serial,
		Steps: []kudov1beta1.Step{{Name: task, Tasks: []string{task}}}}}}
}

// addChart copies the chart into charts/: a tarball as NAME.tgz; a
// directory's files, but those its .helmignore leaves out, under NAME/.
func addChart(files map[string][]byte, chartPath string, chart *chartv2.Chart) error {
	info, err := os.Stat(chartPath)
	if err != nil {
		return err
	}
	name := chart.Metadata.Name
	if !info.IsDir() {
		data, err := os.ReadFile(chartPath)
		files[packages.ChartsDir+name+".tgz"] = data
		return err
	}
	for _, f := range chart.Raw {
		files[packages.ChartsDir+name+"/"+f.Name] = f.Data
	}
	return nil
}
