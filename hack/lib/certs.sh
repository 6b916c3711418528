# shellcheck shell=bash
# serving_cert DIR CN SAN: a self-signed CA (DIR/ca.crt) and a serving
# certificate it signed (DIR/tls.crt, DIR/tls.key) for the subjectAltName SAN,
# made once and kept.
serving_cert() {
  local dir=$1 cn=$2 san=$3
  [[ -f $dir/tls.crt ]] && return
  mkdir -p "$dir"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -subj "/CN=kudo-ng-webhook-ca" \
    -days 3650 -out "$dir/ca.crt" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/tls.key" -subj "/CN=$cn" -out "$dir/tls.csr" 2>/dev/null
  printf 'subjectAltName = %s\nextendedKeyUsage = serverAuth\n' "$san" >"$dir/tls.ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 3650 \
    -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
}
