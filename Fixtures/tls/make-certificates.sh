#!/bin/sh
# Made once with OpenSSL 3.0 and committed; the tests only read the files (no openssl CLI needed).
# CA (ca.pem), a server certificate for 127.0.0.1 and localhost (server.pem/server-key.pem), a client
# certificate for etcd's --client-cert-auth (client.pem/client-key.pem) and a second CA nobody trusts
# (other-ca.pem), and a server certificate for the name elsewhere.invalid only (elsewhere.pem/elsewhere-key.pem,
# for the hostname-mismatch cases), all valid for 100 years.
set -eu
cd "$(dirname "$0")"
days=36500
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days $days -subj "/CN=ObservableDefaults test CA"
openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca-key.pem -out other-ca.pem -days $days -subj "/CN=ObservableDefaults other CA"
openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj "/CN=localhost"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server.pem -days $days -extfile server.ext
openssl req -newkey rsa:2048 -nodes -keyout elsewhere-key.pem -out elsewhere.csr -subj "/CN=elsewhere.invalid"
printf 'subjectAltName=DNS:elsewhere.invalid\nextendedKeyUsage=serverAuth\n' > elsewhere.ext
openssl x509 -req -in elsewhere.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out elsewhere.pem -days $days -extfile elsewhere.ext
openssl req -newkey rsa:2048 -nodes -keyout client-key.pem -out client.csr -subj "/CN=root"
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out client.pem -days $days -extfile client.ext
rm -f server.csr client.csr elsewhere.csr server.ext client.ext elsewhere.ext ca.srl ca-key.pem other-ca-key.pem
