#!/usr/bin/env bash
# Installs OLM (the Operator Lifecycle Manager, as OperatorHub's clusters run
# it) on the local control plane: its images built here from the pinned
# module (make olm-tools) and pushed to the cluster's registry, its CRDs and
# its chart's manifests (namespaces olm and operators, as OLM's own install
# makes them), without its default catalog of operatorhub.io, which is not
# reachable. Waits until the package server serves PackageManifests.
# Running it again on a cluster with OLM updates nothing that is unchanged.
#
# OLM's bundle-unpack Jobs tolerate no taint and select no node: the cluster
# must have its real node untainted and no simulated nodes (OLM=true make
# cluster-up starts one so). Environment: as hack/olm/lib.sh says.
set -euo pipefail

name=olm-up cluster_up="OLM=true make cluster-up"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
chart=$(go env GOMODCACHE)/github.com/operator-framework/operator-lifecycle-manager@v$OLM_VERSION/deploy
olm_image=$registry/olm:v$OLM_VERSION
opm_image=$registry/opm:v$OPM_VERSION

[[ -d $chart/chart ]] || (cd "$root" && go mod download "github.com/operator-framework/operator-lifecycle-manager@v$OLM_VERSION")

image hack/olm/olm.Dockerfile "$olm_image" olm="$bin/olm-olm" catalog="$bin/olm-catalog" \
  package-server="$bin/olm-package-server" copy-content="$bin/olm-copy-content" cpb="$bin/olm-cpb" busybox=/bin/busybox
image hack/olm/opm.Dockerfile "$opm_image" opm="$bin/opm" grpc_health_probe="$bin/grpc_health_probe" busybox=/bin/busybox

# Server-side: OLM's CRDs are past client-side apply's annotation limit.
kubectl apply --server-side --force-conflicts -f "$chart/chart/crds" >/dev/null
kubectl wait --for condition=Established crd --all --timeout 60s >/dev/null

# OLM's upstream values, with the images built here and one package server
# (the real node is the machine's two cores). The default CatalogSource
# (operatorhub.io) is left out.
"$bin/helm" template olm "$chart/chart" -f "$chart/upstream/values.yaml" \
  --set olm.image.ref="$olm_image" --set catalog.image.ref="$olm_image" --set package.image.ref="$olm_image" \
  --set olm.image.pullPolicy=IfNotPresent --set catalog.image.pullPolicy=IfNotPresent \
  --set package.image.pullPolicy=IfNotPresent --set package.replicaCount=1 \
  --set catalog.opmImageArgs="--opmImage=$opm_image" |
  awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/# Source: olm\/templates\/[^\n]*catalogsource.yaml/' |
  kubectl apply -f - >/dev/null

kubectl -n olm wait deployment/olm-operator deployment/catalog-operator --for condition=Available --timeout 120s >/dev/null
# The olm operator makes the package server's CSV, then installs it.
kubectl -n olm wait csv/packageserver --for create --timeout 120s >/dev/null
kubectl -n olm wait csv/packageserver --for jsonpath='{.status.phase}'=Succeeded --timeout 180s >/dev/null
kubectl wait apiservice/v1.packages.operators.coreos.com --for condition=Available --timeout 120s >/dev/null
echo "olm-up: OLM v$OLM_VERSION ready in $((SECONDS - start))s (namespaces olm and operators; images $olm_image, $opm_image)" >&2
