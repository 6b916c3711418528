#!/usr/bin/env bash
# Installs OLM v1 (operator-controller and catalogd, from the pinned module's
# standard manifests) on the local control plane, and cert-manager, which OLM
# v1 needs on plain Kubernetes: it issues OLM v1's own certificates and those
# of the webhooks of the bundles it installs. Every image is built here from
# the module proxy (make olm-v1-tools) and pushed to the cluster's registry.
# Running it again on a cluster with OLM v1 updates nothing that is unchanged.
#
# What differs from upstream's install, and why:
# - cert-manager's own webhook, which only validates cert-manager's objects,
#   is left out: one pod less on a two-core node;
# - catalogd and operator-controller pull catalog and bundle images
#   themselves: their CA directory also holds the cluster registry's CA;
# - operator-controller runs with the feature gate WebhookProviderCertManager,
#   which serves the webhooks of a bundle's CSV (GA, and on by default, in
#   later releases).
#
# OLM v1's pods must run on the real node: the cluster must have its real node
# untainted and no simulated nodes (OLM=v1 make cluster-up starts one so).
# Environment: as hack/olm/lib.sh says.
set -euo pipefail

name=olm-v1-up cluster_up="OLM=v1 make cluster-up"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
modules=$(go env GOMODCACHE)
olmv1=$modules/github.com/operator-framework/operator-controller@v$OPERATOR_CONTROLLER_VERSION
certmanager=$modules/github.com/cert-manager/cert-manager@v$CERT_MANAGER_VERSION
olmv1_image=$registry/olmv1:v$OPERATOR_CONTROLLER_VERSION
certmanager_image=$registry/cert-manager

# The checksum database here does not know this operator-controller release
# (hack/versions.env).
[[ -d $olmv1/manifests ]] || (cd "$root" && GONOSUMDB=github.com/operator-framework/operator-controller \
  go mod download "github.com/operator-framework/operator-controller@v$OPERATOR_CONTROLLER_VERSION")
[[ -d $certmanager/deploy ]] || (cd "$root" && go mod download "github.com/cert-manager/cert-manager@v$CERT_MANAGER_VERSION")

image hack/olm/olmv1.Dockerfile "$olmv1_image" operator-controller="$bin/operator-controller" catalogd="$bin/catalogd"
for component in controller cainjector; do
  image "hack/olm/cert-manager-$component.Dockerfile" "$certmanager_image-$component:v$CERT_MANAGER_VERSION" \
    "cert-manager-$component=$bin/cert-manager-$component"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cert-manager from its chart, as its release makes it: the chart's version
# set, its CRDs with their labels, without the webhook.
cp -R "$certmanager/deploy/charts/cert-manager" "$work/cert-manager"
chmod -R u+w "$work/cert-manager"
sed "s/v0\.1\.0/v$CERT_MANAGER_VERSION/" "$work/cert-manager/Chart.template.yaml" >"$work/cert-manager/Chart.yaml"
for crd in "$certmanager"/deploy/crds/crd-*.yaml; do
  sed -e '/Generated labels/d' -e 's/{{ template "cert-manager.name" . }}/cert-manager/' \
    -e 's/{{ .Release.Name }}/cert-manager/' "$crd"
  echo ---
done | kubectl apply --server-side --force-conflicts -f - >/dev/null
kubectl wait --for condition=Established crd -l app.kubernetes.io/name=cert-manager --timeout 60s >/dev/null
kubectl create namespace cert-manager --dry-run=client -o yaml | kubectl apply -f - >/dev/null
"$bin/helm" template cert-manager "$work/cert-manager" --namespace cert-manager --kube-version "$KUBERNETES_VERSION" \
  --set image.repository="$certmanager_image-controller" --set image.tag="v$CERT_MANAGER_VERSION" \
  --set cainjector.image.repository="$certmanager_image-cainjector" --set cainjector.image.tag="v$CERT_MANAGER_VERSION" \
  --set startupapicheck.enabled=false |
  awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/# Source: cert-manager\/templates\/webhook-/' |
  kubectl apply -f - >/dev/null
kubectl -n cert-manager wait deployment/cert-manager deployment/cert-manager-cainjector --for condition=Available --timeout 120s >/dev/null

# OLM v1's standard manifests, with the images built here, the registry's CA
# beside OLM v1's own and the webhook provider's gate.
cp "$olmv1/manifests/standard.yaml" "$work/standard.yaml"
cp "$registry_ca" "$work/registry-ca.crt"
cat >"$work/kustomization.yaml" <<YAML
resources: [standard.yaml]
images:
- {name: quay.io/operator-framework/operator-controller, newName: $registry/olmv1, newTag: v$OPERATOR_CONTROLLER_VERSION}
- {name: quay.io/operator-framework/catalogd, newName: $registry/olmv1, newTag: v$OPERATOR_CONTROLLER_VERSION}
configMapGenerator:
- name: registry-ca
  namespace: olmv1-system
  files: [ca.crt=registry-ca.crt]
  options: {disableNameSuffixHash: true}
patches:
- target: {kind: Deployment, name: catalogd-controller-manager}
  patch: |
    - {op: test, path: /spec/template/spec/volumes/3/name, value: olmv1-certificate}
    - op: replace
      path: /spec/template/spec/volumes/3
      value:
        name: olmv1-certificate
        projected:
          sources:
          - secret: {name: catalogd-service-cert-git-version, items: [{key: ca.crt, path: olm-ca.crt}]}
          - configMap: {name: registry-ca, items: [{key: ca.crt, path: registry-ca.crt}]}
- target: {kind: Deployment, name: operator-controller-controller-manager}
  patch: |
    - {op: test, path: /spec/template/spec/volumes/2/name, value: olmv1-certificate}
    - op: replace
      path: /spec/template/spec/volumes/2
      value:
        name: olmv1-certificate
        projected:
          sources:
          - secret:
              name: olmv1-cert
              items: [{key: ca.crt, path: olm-ca.crt}, {key: tls.crt, path: tls.cert}, {key: tls.key, path: tls.key}]
          - configMap: {name: registry-ca, items: [{key: ca.crt, path: registry-ca.crt}]}
    - {op: add, path: /spec/template/spec/containers/0/args/-, value: --feature-gates=WebhookProviderCertManager=true}
YAML
"$bin/kustomize" build "$work" | kubectl apply --server-side --force-conflicts -f - >/dev/null
kubectl wait --for condition=Established crd/clustercatalogs.olm.operatorframework.io crd/clusterextensions.olm.operatorframework.io --timeout 60s >/dev/null
kubectl -n olmv1-system wait deployment/catalogd-controller-manager deployment/operator-controller-controller-manager \
  --for condition=Available --timeout 180s >/dev/null
echo "olm-v1-up: OLM v1 (operator-controller v$OPERATOR_CONTROLLER_VERSION) and cert-manager v$CERT_MANAGER_VERSION ready in $((SECONDS - start))s (namespaces olmv1-system and cert-manager; images $olmv1_image, $certmanager_image-*)" >&2
