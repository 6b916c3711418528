#!/usr/bin/env bash
# Builds one Go tool at a pinned version from the Go module proxy and caches it
# as bin/<name>-v<version>, linked from bin/<name>. A cached tool is not rebuilt.
#
# usage: gobuild.sh NAME VERSION MODULE PACKAGE [go build flags...]
#
# REPLACES, when set, holds replace directives the scratch module needs,
# "OLD => NEW VERSION" separated by ";": those of a tool's own module that its
# dependencies need (OLM's openshift pins).
#
# The tool is built from a scratch module that requires MODULE and lists PACKAGE
# as a tool, rather than with `go install pkg@version`: the proxy here refuses
# the version list of some modules, which `go install` needs for its
# deprecation check, and a scratch module also ignores the tool's own replace
# directives (etcd, kustomize) that make `go install` refuse it. The scratch
# module starts from the tool's own go.sum: the checksum database here does not
# know every pseudo-version a tool pins (operator-controller's crdify), and the
# tool's recorded sums are the ones its authors built with.
set -euo pipefail

name=$1 version=$2 module=$3 package=$4
shift 4

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin
out=$bin/$name-v$version
if [[ -x $out ]]; then
  ln -sfn "$name-v$version" "$bin/$name"
  exit 0
fi

work=$bin/.tools/$name-v$version
mkdir -p "$work"
cat >"$work/go.mod" <<MOD
module kudo-ng.local/tools/$name

go 1.24.0

require $module v$version

tool $package
MOD
IFS=';' read -ra replaces <<<"${REPLACES:-}"
for replace in "${replaces[@]}"; do
  echo "replace $replace" >>"$work/go.mod"
done
echo "building $name v$version from $module (first run only)" >&2
start=$SECONDS
(
  cd "$work"
  src=$(go mod download -json "$module@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [[ -f $src/go.sum ]]; then cp "$src/go.sum" go.sum && chmod u+w go.sum; fi
  go mod tidy
  CGO_ENABLED=${CGO_ENABLED:-0} go build -trimpath -ldflags "-s -w ${LDFLAGS:-}" "$@" -o "$out.tmp" "$package"
)
mv "$out.tmp" "$out"
ln -sfn "$name-v$version" "$bin/$name"
echo "built $name v$version in $((SECONDS - start))s" >&2
