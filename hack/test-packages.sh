#!/usr/bin/env bash
# make test-packages: the kuttl tests (tests/ beside operator/) of the
# project's own example packages (examples/*) and of the conformance packages
# (KUDO_OPERATORS), run with `kubectl kudo test` on a local control plane of
# their own, with its real node (Pipe pods run there), the manager and its
# webhooks, stopped at the end. A test listed in
# test/packages/expected-failures.txt must fail; one listed there that passes
# fails the run too, so that the list stays true.
# Environment (set by the Makefile): KUBECTL, KUSTOMIZE, KUTTL;
# KUDO_OPERATORS, a directory laid out as kudobuilder/operators' repository/
# (DIR/<name>/operator, DIR/<name>/tests): unset, the corpus beside the
# repository when it exists; empty runs the examples only; PACKAGES_PORT_BASE
# (default 16840).
set -euo pipefail
shopt -s nullglob

root=$(cd "$(dirname "$0")/.." && pwd)
skip_corpus() {
  echo "test-packages: $1: skipping the conformance packages' tests" \
    "(set KUDO_OPERATORS=DIR, laid out as kudobuilder/operators' repository/)" >&2
}
corpus=
if [[ -v KUDO_OPERATORS && -z $KUDO_OPERATORS ]]; then
  skip_corpus "KUDO_OPERATORS is empty"
elif [[ -v KUDO_OPERATORS ]]; then
  if [[ ! -d $KUDO_OPERATORS ]]; then
    echo "test-packages: KUDO_OPERATORS=$KUDO_OPERATORS is not a directory: name one laid out as" \
      "kudobuilder/operators' repository/, or set KUDO_OPERATORS= to run the examples' tests only" >&2
    exit 1
  fi
  corpus=$(cd "$KUDO_OPERATORS" && pwd)
elif corpus_beside=$root/../shared/conformance && [[ -d $corpus_beside ]]; then
  corpus=$(cd "$corpus_beside" && pwd)
else
  skip_corpus "KUDO_OPERATORS is not set and ../shared/conformance does not exist"
fi
expected_file=$root/test/packages/expected-failures.txt
# The physical path (bin may be a symlink): down.sh finds the real node's
# mounts by the path the kernel lists them under.
out=$(cd "$root/bin" && pwd -P)/test-packages
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

# A cluster an interrupted run left.
if ! "$root/hack/cluster/down.sh" 2>/dev/null; then
  echo "test-packages: the cluster a previous run left in $CLUSTER_DIR does not stop:" \
    "run CLUSTER_DIR=$CLUSTER_DIR hack/cluster/down.sh to see why" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$logs" "$out/work"
stop_cluster() {
  if ! "$root/hack/cluster/down.sh" >"$out/cluster-down.log" 2>&1; then
    echo "test-packages: stopping the control plane failed ($out/cluster-down.log)" >&2
    exit 1
  fi
}
trap stop_cluster EXIT
"$root/hack/cluster/up.sh" >/dev/null

"$KUSTOMIZE" build "$root/config/crd" | kubectl apply --server-side -f - >/dev/null
(cd "$root" && go build -o bin/kubectl-kudo ./cmd/kubectl-kudo)
start_manager "$root" "$CLUSTER_DIR" "$logs/manager.log" --leader-elect=false 2>/dev/null
echo "test-packages: control plane, CRDs and manager ready in $((SECONDS - start))s" >&2

# The operator a package's tests start from: operator/ beside tests/ or, for
# a package laid out by version (<version>/operator), its oldest version; its
# tests upgrade to the others themselves.
first_operator() {
  local package=$1
  if [[ -d $package/operator ]]; then
    echo "$package/operator"
  else
    printf '%s\n' "$package"/*/operator | sort -V | head -n 1
  fi
}

failed=0 passed=0 xfailed=0
declare -A seen ran
for tests in "$root"/examples/*/tests ${corpus:+"$corpus"/*/tests}; do
  package=$(basename "$(dirname "$tests")")
  operator=$(first_operator "$(dirname "$tests")")
  if [[ -z $operator ]]; then
    echo "FAIL   $package: no operator/ (or <version>/operator) beside $tests" >&2
    failed=$((failed + 1))
    continue
  fi
  # The tests create Instances whose spec.operatorVersion names the package's
  # OperatorVersion in namespace default, so it is installed there first; the
  # Instances live in kuttl's own namespace for each test, as under KUDO.
  if ! kubectl kudo install "$operator" --skip-instance >"$logs/$package-install.log" 2>&1; then
    echo "FAIL   $package: kubectl kudo install $operator --skip-instance failed:" >&2
    cat "$logs/$package-install.log" >&2
    failed=$((failed + 1))
    continue
  fi
  ran[$package]=1
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
# Only a package whose tests ran can tell that a line names no test.
for id in "${!expected[@]}"; do
  if [[ -v ran[${id%%/*}] && ! -v seen[$id] ]]; then
    echo "STALE  $id is in $expected_file but is no package's test: remove its line" >&2
    failed=$((failed + 1))
  fi
done

echo "test-packages: $passed passed, $xfailed expected failures, $failed failed, in $((SECONDS - start))s (logs: $logs)" >&2
if ((failed > 0)); then
  echo "manager log: $logs/manager.log" >&2
  exit 1
fi
