#!/usr/bin/env bash
# Renders the file-based catalog of the package kudo-ng into DIR/catalog, and
# opm's cache of it into DIR/cache, as make catalog-build packs them: the
# package, its channel alpha (the bundles' default) and each bundle, rendered
# by opm from its image. The bundles are
# given oldest first; each one's channel entry replaces the one before, which
# is how OLM finds the upgrade from one version to the next.
#
# usage: catalog.sh DIR BUNDLE_IMAGE...
# Environment: LOCAL_REGISTRY (default 10.244.0.1:5000) and its CA,
# LOCAL_REGISTRY_CA (default bin/cluster/pki/registry-ca.crt), which opm
# trusts for it.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
opm=$root/bin/opm
registry=${LOCAL_REGISTRY:-10.244.0.1:5000}
registry_ca=${LOCAL_REGISTRY_CA:-$root/bin/cluster/pki/registry-ca.crt}
dir=$1
catalog=$dir/catalog
out=$catalog/kudo-ng
shift
(($# > 0)) || {
  echo "catalog.sh: no bundle image" >&2
  exit 1
}
rm -rf "$out" && mkdir -p "$out"
# opm pulls with containers/image, which wants a signature policy from the
# user's or the machine's configuration: it gets one of its own here, which
# checks no signatures, as none of these images is signed, and the local
# registry's CA where containers/image looks for a registry's.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/.config/containers/certs.d/$registry"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$home/.config/containers/policy.json"
[[ ! -f $registry_ca ]] || cp "$registry_ca" "$home/.config/containers/certs.d/$registry/ca.crt"

entries="" previous=""
for bundle in "$@"; do
  HOME=$home "$opm" render "$bundle" -o yaml >"$out/bundle.tmp"
  # The rendered olm.bundle's own name, the CSV's, is its only top-level one.
  name=$(sed -n 's/^name: //p' "$out/bundle.tmp")
  [[ -n $name ]] || {
    echo "catalog.sh: opm rendered no bundle name for $bundle" >&2
    exit 1
  }
  # Each document opm writes starts with ---.
  cat "$out/bundle.tmp" >>"$out/bundles.yaml"
  entries+="  - name: $name"$'\n'
  [[ -z $previous ]] || entries+="    replaces: $previous"$'\n'
  previous=$name
done
rm "$out/bundle.tmp"

{
  "$opm" init kudo-ng --default-channel alpha -o yaml
  printf -- '---\nschema: olm.channel\npackage: kudo-ng\nname: alpha\nentries:\n%s' "$entries"
  cat "$out/bundles.yaml"
} >"$out/catalog.yaml"
rm "$out/bundles.yaml"
"$opm" validate "$catalog"
# The cache opm serves from, built here as opm's own catalog Dockerfile
# builds it (RUN opm serve --cache-only): the image cannot run anything
# while it is built, and opm refuses to serve without it.
rm -rf "$dir/cache"
if ! log=$("$opm" serve "$catalog" --cache-dir "$dir/cache" --cache-only 2>&1); then
  echo "$log" >&2
  exit 1
fi
