#!/bin/sh
# Regenerates the test-only TLS material of ConsulTlsTest (valid for 100 years). Never use these
# keys for anything else: they are public.
set -eu
cd "$(dirname "$0")"
days=36500
# A CA, and a second CA that nothing trusts.
openssl ecparam -name prime256v1 -genkey -noout -out ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days $days -subj "/CN=rollcall test CA" -out ca.pem
openssl ecparam -name prime256v1 -genkey -noout -out other-ca-key.pem
openssl req -x509 -new -key other-ca-key.pem -sha256 -days $days -subj "/CN=untrusted CA" -out other-ca.pem
# The stand-in's server certificate for 127.0.0.1 / localhost, as PKCS#12 (password: changeit).
openssl ecparam -name prime256v1 -genkey -noout -out server-key.pem
openssl req -new -key server-key.pem -subj "/CN=server.dc1.consul" -out server.csr
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:server.dc1.consul\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days $days -sha256 -extfile server.ext -out server.pem
openssl pkcs12 -export -in server.pem -inkey server-key.pem -certfile ca.pem -name server -passout pass:changeit -out server.p12
# A client certificate with an EC key in SEC1 form ("EC PRIVATE KEY", as `consul tls cert create` writes).
openssl ecparam -name prime256v1 -genkey -noout -out client-key.pem
openssl req -new -key client-key.pem -subj "/CN=rollcall client" -out client.csr
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days $days -sha256 -extfile client.ext -out client.pem
openssl pkcs8 -topk8 -nocrypt -in client-key.pem -out client-key-pkcs8.pem
# The same client with an RSA key in PKCS#1 form ("RSA PRIVATE KEY").
openssl genrsa -traditional -out client-rsa-key.pem 2048 2>/dev/null || openssl genrsa -out client-rsa-key.pem 2048
openssl req -new -key client-rsa-key.pem -subj "/CN=rollcall rsa client" -out client-rsa.csr
openssl x509 -req -in client-rsa.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days $days -sha256 -extfile client.ext -out client-rsa.pem
rm -f ./*.csr ./*.ext ./*.srl ca-key.pem other-ca-key.pem server-key.pem
