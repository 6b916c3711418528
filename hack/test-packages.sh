#!/usr/bin/env bash
# make test-packages: each conformance package's own kuttl tests (tests/ beside
# operator/) run with `kubectl kudo test`, on a local control plane of their
# own with the manager and its webhooks running, stopped at the end. A test
# listed in test/packages/expected-failures.txt must fail; one listed there
# that passes fails the run too, so that the list stays true.
# Environment (set by the Makefile): KUBECTL, KUSTOMIZE, KUTTL; CONFORMANCE
# (default ../shared/conformance), PACKAGES_PORT_BASE (default 16840).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
conformance=$(cd "${CONFORMANCE:-$root/../shared/conformance}" && pwd)
expected_file=$root/test/packages/expected-failures.txt
out=$root/bin/test-packages
logs=$out/logs
start=$SECONDS

export CLUSTER_DIR=$out/cluster CLUSTER_PORT_BASE=${PACKAGES_PORT_BASE:-16840}
export KUBECONFIG=$CLUSTER_DIR/kubeconfig
# The tests run `kubectl kudo ...`: kubectl finds bin/kubectl-kudo as its
# plugin, and kubectl-kudo finds bin/kubectl-kuttl beside it.
PATH=$root/bin:$(dirname "$KUBECTL"):$PATH
export PATH

# shellcheck source=hack/lib/manager.sh
source "$root/hack/lib/manager.sh"

# Each line of the file: package/test, then why it cannot pass here.
declare -A expected
while read -r id why; do
  [[ -z $id || $id == \#* ]] && continue
  expected[$id]=$why
done <"$expected_file"

"$root/hack/cluster/down.sh" 2>/dev/null # a cluster an interrupted run left
rm -rf "$out"
mkdir -p "$logs" "$out/work"
trap '"$root/hack/cluster/down.sh" >/dev/null 2>&1' EXIT
"$root/hack/cluster/up.sh" >/dev/null

"$KUSTOMIZE" build "$root/config/crd" | kubectl apply --server-side -f - >/dev/null
(cd "$root" && go build -o bin/kubectl-kudo ./cmd/kubectl-kudo)
start_manager "$root" "$CLUSTER_DIR" "$logs/manager.log" --leader-elect=false 2>/dev/null
echo "test-packages: control plane, CRDs and manager ready in $((SECONDS - start))s" >&2

failed=0 passed=0 xfailed=0
declare -A seen
for tests in "$conformance"/*/tests; do
  package=$(basename "$(dirname "$tests")")
  # The tests create Instances whose spec.operatorVersion names the package's
  # OperatorVersion in namespace default, so it is installed there first; the
  # Instances live in kuttl's own namespace for each test, as under KUDO.
  if ! kubectl kudo install "$tests/../operator" --skip-instance >"$logs/$package-install.log" 2>&1; then
    echo "FAIL   $package: kubectl kudo install --skip-instance failed:" >&2
    cat "$logs/$package-install.log" >&2
    failed=$((failed + 1))
    continue
  fi
  for dir in "$tests"/*/; do
    name=$(basename "$dir") id=$package/$(basename "$dir")
    seen[$id]=1
    log=$logs/$package-$name.log
    t=$SECONDS
    # kuttl writes a kubeconfig into its working directory: not the package's.
    if (cd "$out/work" && kubectl kudo test "$tests" --test "$name" --timeout 60) >"$log" 2>&1; then
      if [[ -v expected[$id] ]]; then
        echo "XPASS  $id passed, but $expected_file says it cannot: remove its line ($log)" >&2
        failed=$((failed + 1))
      else
        echo "PASS   $id ($((SECONDS - t))s)" >&2
        passed=$((passed + 1))
      fi
    elif [[ -v expected[$id] ]]; then
      echo "XFAIL  $id ($((SECONDS - t))s): ${expected[$id]}" >&2
      # What kuttl said, so that a failure for another reason shows.
      grep -m1 -A1 'failed in step' "$log" | sed 's/^[[:space:]]*/         /' >&2 || true
      xfailed=$((xfailed + 1))
    else
      echo "FAIL   $id ($((SECONDS - t))s): kuttl's output ($log):" >&2
      sed 's/^/         /' "$log" >&2
      # The cluster is gone after the run: keep what it held.
      kubectl get nodes,pods,pvc,pv,jobs,statefulsets,deployments,instances -A -o wide >"${log%.log}.cluster.txt" 2>&1 || true
      failed=$((failed + 1))
    fi
  done
done
for id in "${!expected[@]}"; do
  if [[ ! -v seen[$id] ]]; then
    echo "STALE  $id is in $expected_file but is no package's test: remove its line" >&2
    failed=$((failed + 1))
  fi
done

echo "test-packages: $passed passed, $xfailed expected failures, $failed failed, in $((SECONDS - start))s (logs: $logs)" >&2
if ((failed > 0)); then
  echo "manager log: $logs/manager.log" >&2
  exit 1
fi
