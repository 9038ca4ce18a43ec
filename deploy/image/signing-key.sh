#!/usr/bin/env bash
# signing-key.sh -- the keys a clinic signs its update bundles with (RAUC checks every bundle
# against the certificate authority an image trusts):
#
#   deploy/image/signing-key.sh DIR [NAME]
#
# makes in DIR (created, mode 0700; nothing is replaced):
#   ca.cert.pem     the authority's certificate: an image built with --keyring DIR/ca.cert.pem
#                   installs only bundles signed under it
#   ca.key.pem      the authority's key: signs signer certificates only; keep it offline
#   signer.cert.pem, signer.key.pem
#                   what deploy/image/build-bundle.sh signs with (extended key usage codeSigning,
#                   which the image's RAUC asks for)
# NAME (default "Unwind updates") goes in the certificates' common names. The certificates are
# valid from 2000 to 2099: a board without a clock that keeps time may wake in 1970 or in any
# year its last boot saw, and RAUC checks a bundle at its signing time (use-bundle-signing-time).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# log, die
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$here/../lib/toolkit.sh"
dir=${1:-}
name=${2:-Unwind updates}
[ -n "$dir" ] || die --status 2 "usage: signing-key.sh DIR [NAME]"
for f in ca.cert.pem ca.key.pem signer.cert.pem signer.key.pem; do
    [ ! -e "$dir/$f" ] || die "$dir/$f exists; the keys are made once and never replaced here"
done
command -v openssl >/dev/null || die "openssl is missing (apt-get install openssl)"
case $name in *[![:alnum:]\ ._-]*) die "the name may hold letters, digits, spaces, dots, dashes and underscores only" ;; esac
if [ ! -e "$dir" ]; then
    mkdir -p "$dir"
    chmod 0700 "$dir"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/ca.cnf" <<'CNF'
[ca]
default_ca = authority
[authority]
dir = .
database = $dir/index.txt
new_certs_dir = $dir
serial = $dir/serial
default_md = sha256
default_startdate = 20000101000000Z
default_enddate = 20991231235959Z
policy = any_name
copy_extensions = none
unique_subject = no
[any_name]
commonName = supplied
[authority_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[signer_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,codeSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF
(
    cd "$work"
    : >index.txt
    echo 01 >serial
    umask 077
    openssl req -new -newkey rsa:3072 -nodes -keyout ca.key.pem -subj "/CN=$name authority" -out ca.csr 2>/dev/null
    openssl ca -batch -config ca.cnf -selfsign -keyfile ca.key.pem -extensions authority_ext -in ca.csr -out ca.cert.pem 2>/dev/null
    openssl req -new -newkey rsa:3072 -nodes -keyout signer.key.pem -subj "/CN=$name signer" -out signer.csr 2>/dev/null
    openssl ca -batch -config ca.cnf -cert ca.cert.pem -keyfile ca.key.pem -extensions signer_ext -in signer.csr -out signer.cert.pem 2>/dev/null
    openssl verify -CAfile ca.cert.pem signer.cert.pem >/dev/null
) || die "openssl could not make the keys"
install -m 0644 "$work/ca.cert.pem" "$work/signer.cert.pem" "$dir/"
install -m 0600 "$work/ca.key.pem" "$work/signer.key.pem" "$dir/"
log "made $dir: ca.cert.pem (for build-image.sh --keyring), signer.cert.pem and signer.key.pem (for build-bundle.sh); keep ca.key.pem offline"
