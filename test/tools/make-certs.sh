#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes the test PKI in DIR (ECDSA P-256, openssl CLI only):
#   ca.pem ca.key                 test CA
#   server.key                    key shared by all server certificates below
#   server-chain.pem              SAN localhost, ntp.test, *.nts.test (the DNS fixture's zone,
#                                 test/lib/dnssec.sh), 127.0.0.1, ::1 (leaf + CA)
#   expired-chain.pem             same names, validity 2020-01-01..2021-01-01
#   future-chain.pem              same names, validity starts 2099-01-01 (looks "not yet valid")
#   wrongname-chain.pem           SAN wrong.test only
#   otherca-chain.pem             same names, signed by another CA (other-ca.pem)
#   selfsigned-chain.pem          same names, a self-signed leaf alone
# Idempotent: an existing complete DIR is kept.
#   make-certs.sh DIR NAME START END [CA_START CA_END]
# also signs NAME-chain.pem with the test CA: same names, validity START..END (YYYYMMDDHHMMSSZ),
# for tests whose dates are relative to now (a certificate valid from two years ahead). With
# CA_START and CA_END, through an intermediate CA NAME-ca valid CA_START..CA_END: NAME-chain.pem
# is then the leaf and that intermediate.
set -euo pipefail

dir=${1:?usage: make-certs.sh DIR [NAME START END [CA_START CA_END]]}
mkdir -p "$dir"
cd "$dir"

sans="DNS:localhost,DNS:ntp.test,DNS:*.nts.test,IP:127.0.0.1,IP:::1"

newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

mkca() { # NAME CN
        newkey "$1.key"
        openssl req -x509 -new -key "$1.key" -sha256 -days 3650 -subj "/CN=$2" \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
                -out "$1.pem" 2>/dev/null
}

# sign NAME CA SAN STARTDATE ENDDATE [PROFILE]: uses 'openssl ca' so validity dates can lie in
# the past or the future (x509 -days cannot express either on OpenSSL 3.0). PROFILE: leaf (the
# default, key server.key) or intermediate (a CA, key NAME.key).
sign() {
        local name=$1 ca=$2 san=$3 start=$4 end=$5 profile=${6:-leaf} key=server.key
        local db; db=$(mktemp -d)
        : > "$db/index.txt"
        echo 1000 > "$db/serial"
        cat > "$db/ca.cnf" <<CNF
[ca]
default_ca = test
[test]
database = $db/index.txt
serial = $db/serial
new_certs_dir = $db
default_md = sha256
policy = anything
copy_extensions = none
unique_subject = no
x509_extensions = $profile
[anything]
commonName = supplied
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = $san
[intermediate]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
CNF
        if [ "$profile" = intermediate ]; then
                key=$name.key
                newkey "$key"
        fi
        openssl req -new -key "$key" -subj "/CN=$name" -out "$db/req.csr" 2>/dev/null
        openssl ca -batch -config "$db/ca.cnf" -cert "$ca.pem" -keyfile "$ca.key" \
                -startdate "$start" -enddate "$end" -in "$db/req.csr" -out "$name.pem" \
                -notext 2>/dev/null
        cat "$name.pem" "$ca.pem" > "$name-chain.pem"
        rm -rf "$db"
}

if [ ! -s selfsigned-chain.pem ]; then
        mkca ca "timesyncd-nts test CA"
        mkca other-ca "timesyncd-nts other CA"
        newkey server.key
        sign server ca "$sans" 20240101000000Z 20991231000000Z
        sign expired ca "$sans" 20200101000000Z 20210101000000Z
        sign future ca "$sans" 20990101000000Z 20991231000000Z
        sign wrongname ca "DNS:wrong.test" 20240101000000Z 20991231000000Z
        sign otherca other-ca "$sans" 20240101000000Z 20991231000000Z
        # Last: its presence marks a complete DIR.
        openssl req -x509 -new -key server.key -sha256 -days 3650 -subj "/CN=selfsigned" \
                -addext basicConstraints=critical,CA:FALSE -addext "subjectAltName=$sans" \
                -out selfsigned-chain.pem 2>/dev/null
fi
if [ $# -ge 6 ]; then
        sign "$2-ca" ca "$sans" "$5" "$6" intermediate
        sign "$2" "$2-ca" "$sans" "$3" "$4"
elif [ $# -ge 4 ]; then
        sign "$2" ca "$sans" "$3" "$4"
fi
chmod 0644 ./*.pem
chmod 0600 ./*.key
