package v1alpha1

// PrometheusAuth is how perfexp authenticates to a metrics backend (Thanos, Mimir, Cortex,
// VictoriaMetrics, a Prometheus behind a proxy). It maps onto the HTTP client configuration of
// the Prometheus ecosystem (prometheus/common's http_config): at most one of bearerToken,
// basicAuth and oauth2, plus TLS and headers. See docs/backends.md.
// +kubebuilder:validation:XValidation:rule="(has(self.bearerToken) ? 1 : 0) + (has(self.basicAuth) ? 1 : 0) + (has(self.oauth2) ? 1 : 0) <= 1",message="set at most one of bearerToken, basicAuth and oauth2"
type PrometheusAuth struct {
	// bearerToken is sent as "Authorization: Bearer <token>".
	// +optional
	BearerToken *SecretKey `json:"bearerToken,omitempty"`

	// basicAuth is sent as HTTP basic authentication.
	// +optional
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`

	// oauth2 fetches a token with the OAuth2 client-credentials grant and sends it as a bearer
	// token. Reading only: k6's remote-write output has no OAuth2, so the runners send none
	// (see docs/backends.md).
	// +optional
	OAuth2 *OAuth2 `json:"oauth2,omitempty"`

	// tls verifies the backend with a CA of its own and presents a client certificate (mTLS).
	// +optional
	TLS *TLSAuth `json:"tls,omitempty"`

	// headers are extra request headers whose values come from Secrets, for a gateway's API key
	// or a tenant header that is itself a secret. The tenant header the operator maps to the
	// experiment's namespace, when there is one, is set after these and wins.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Headers []SecretHeader `json:"headers,omitempty"`
}

// SecretKey names one key of a Secret in the experiment's namespace.
type SecretKey struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the key within the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	// username is the user name.
	// +required
	Username SecretKey `json:"username"`

	// password is the password.
	// +required
	Password SecretKey `json:"password"`
}

// OAuth2 is the OAuth2 client-credentials grant.
type OAuth2 struct {
	// clientID is the client's id.
	// +required
	ClientID SecretKey `json:"clientID"`

	// clientSecret is the client's secret.
	// +required
	ClientSecret SecretKey `json:"clientSecret"`

	// tokenURL is where tokens are fetched.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^https?://`
	TokenURL string `json:"tokenURL"`

	// scopes are the scopes asked for.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	Scopes []string `json:"scopes,omitempty"`
}

// TLSAuth is the TLS side of the connection to the backend.
// +kubebuilder:validation:XValidation:rule="has(self.cert) == has(self.key)",message="tls.cert and tls.key go together"
type TLSAuth struct {
	// ca is the PEM bundle that signs the backend's certificate, when the system's roots do
	// not. The runners trust it beside their image's roots (SSL_CERT_DIR).
	// +optional
	CA *SecretKey `json:"ca,omitempty"`

	// cert is the PEM client certificate presented to the backend.
	// +optional
	Cert *SecretKey `json:"cert,omitempty"`

	// key is the PEM private key of cert.
	// +optional
	Key *SecretKey `json:"key,omitempty"`

	// serverName is the name the backend's certificate must carry, when it is not the URL's
	// host.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`
}

// SecretHeader is a request header whose value is read from a Secret.
type SecretHeader struct {
	// name is the header's name, e.g. X-Scope-OrgID.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9]*$`
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii() != 'authorization'",message="set Authorization with bearerToken, basicAuth or oauth2"
	Name string `json:"name"`

	// valueFrom is the Secret key that holds the header's value.
	// +required
	ValueFrom SecretKey `json:"valueFrom"`
}
