# shellcheck shell=bash
# Certificates and kubeconfigs of the local cluster, made with openssl. Sourced by
# hack/local-cluster after lib.sh. Existing files are kept, so restarting never invalidates
# tokens or kubeconfigs a user copied; a serving certificate whose addresses no longer match the
# node is reissued.

# sign_cert NAME CN O SANS USAGE issues pki/NAME.{crt,key} signed by the cluster CA.
# SANS is an openssl subjectAltName value (may be empty); USAGE is serverAuth and/or clientAuth.
sign_cert() {
  local name="$1" cn="$2" org="$3" sans="$4" usage="$5" subj ext
  subj="/CN=${cn}"
  [ -z "${org}" ] || subj="/O=${org}${subj}"
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=${usage}"
    [ -z "${sans}" ] || echo "subjectAltName=${sans}"
  } >"${ext}"
  openssl genrsa -out "${PKI}/${name}.key" 2048 2>/dev/null
  openssl req -new -key "${PKI}/${name}.key" -subj "${subj}" -out "${PKI}/${name}.csr" 2>/dev/null
  openssl x509 -req -in "${PKI}/${name}.csr" -CA "${PKI}/ca.crt" -CAkey "${PKI}/ca.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "${ext}" -out "${PKI}/${name}.crt" 2>/dev/null
  rm -f "${ext}" "${PKI}/${name}.csr"
}

# cert_has_ip NAME IP succeeds when pki/NAME.crt lists IP among its subject alternative names.
cert_has_ip() {
  openssl x509 -in "${PKI}/$1.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "IP Address:$2\(,\|$\)"
}

# write_kubeconfig FILE USER CERTNAME SERVER writes a self-contained kubeconfig (certificates
# embedded), so it keeps working when copied elsewhere.
write_kubeconfig() {
  local file="$1" user="$2" cert="$3" server="$4" tmp
  tmp="$(mktemp)"
  cat >"${tmp}" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: perfexp-local
  cluster:
    server: ${server}
    certificate-authority-data: $(base64 -w0 <"${PKI}/ca.crt")
users:
- name: ${user}
  user:
    client-certificate-data: $(base64 -w0 <"${PKI}/${cert}.crt")
    client-key-data: $(base64 -w0 <"${PKI}/${cert}.key")
contexts:
- name: perfexp-local
  context:
    cluster: perfexp-local
    user: ${user}
current-context: perfexp-local
EOF
  chmod 600 "${tmp}"
  mv "${tmp}" "${file}"
}

# ensure_pki NODE_IP NODE_NAME creates whatever certificate or kubeconfig is missing.
ensure_pki() {
  local ip="$1" node="$2"
  mkdir -p "${PKI}" "${STATE}/kubeconfigs"
  chmod 700 "${PKI}"
  if [ ! -s "${PKI}/ca.crt" ] || [ ! -s "${PKI}/ca.key" ]; then
    log "creating the cluster CA"
    openssl genrsa -out "${PKI}/ca.key" 2048 2>/dev/null
    openssl req -x509 -new -key "${PKI}/ca.key" -subj "/CN=perfexp-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "${PKI}/ca.crt" 2>/dev/null
  fi
  # Service account tokens are signed with this key pair; the public half verifies them.
  if [ ! -s "${PKI}/sa.key" ]; then
    openssl genrsa -out "${PKI}/sa.key" 2048 2>/dev/null
    openssl rsa -in "${PKI}/sa.key" -pubout -out "${PKI}/sa.pub" 2>/dev/null
  fi

  local apiserver_sans="DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  apiserver_sans+=",DNS:kubernetes.default.svc.${CLUSTER_DOMAIN},DNS:localhost,DNS:${node}"
  apiserver_sans+=",IP:127.0.0.1,IP:${KUBERNETES_SVC_IP},IP:${ip}"
  if [ ! -s "${PKI}/apiserver.crt" ] || ! cert_has_ip apiserver "${ip}"; then
    log "issuing the kube-apiserver serving certificate for ${ip}"
    sign_cert apiserver kube-apiserver "" "${apiserver_sans}" serverAuth
  fi
  if [ ! -s "${PKI}/kubelet-serving.crt" ] || ! cert_has_ip kubelet-serving "${ip}"; then
    log "issuing the kubelet serving certificate for ${ip}"
    sign_cert kubelet-serving "system:node:${node}" system:nodes "DNS:${node},DNS:localhost,IP:${ip},IP:127.0.0.1" serverAuth
  fi

  # Client identities. RBAC's bootstrap roles and the Node authorizer grant these names
  # exactly what each component needs; the kubelet client of the apiserver (logs, exec) and the
  # local admin are cluster administrators.
  local spec name cn org
  for spec in \
    "admin|perfexp-local-admin|system:masters" \
    "apiserver-kubelet-client|kube-apiserver-kubelet-client|system:masters" \
    "controller-manager|system:kube-controller-manager|" \
    "scheduler|system:kube-scheduler|" \
    "kube-proxy|system:kube-proxy|" \
    "kubelet|system:node:${node}|system:nodes"; do
    IFS='|' read -r name cn org <<<"${spec}"
    if [ ! -s "${PKI}/${name}.crt" ] || ! openssl x509 -in "${PKI}/${name}.crt" -noout -subject | grep -q "CN *= *${cn}\$"; then
      sign_cert "${name}" "${cn}" "${org}" "" clientAuth
    fi
  done

  local server="https://127.0.0.1:${APISERVER_PORT}"
  write_kubeconfig "${KUBECONFIG_PATH}" perfexp-local-admin admin "${server}"
  write_kubeconfig "${STATE}/kubeconfigs/controller-manager.kubeconfig" system:kube-controller-manager controller-manager "${server}"
  write_kubeconfig "${STATE}/kubeconfigs/scheduler.kubeconfig" system:kube-scheduler scheduler "${server}"
  write_kubeconfig "${STATE}/kubeconfigs/kube-proxy.kubeconfig" system:kube-proxy kube-proxy "${server}"
  write_kubeconfig "${STATE}/kubeconfigs/kubelet.kubeconfig" "system:node:${node}" kubelet "${server}"
}
