package v1alpha1

// RouteHistogram names a service's own request-duration histogram, in seconds, and the label
// its series are grouped by: the latency of each API as the service measured it, read from
// the series of the workload's pods only (namespace and pod name).
// +kubebuilder:validation:XValidation:rule="!has(self.statusLabel) || !has(self.routeLabel) || self.statusLabel != self.routeLabel",message="routeLabel and statusLabel must be different labels"
type RouteHistogram struct {
	// metric is the histogram's name without a suffix: a classic histogram's
	// <metric>_bucket and <metric>_sum series, or a native histogram of that name (preferred
	// where both exist), e.g. http_server_requests_seconds or
	// demo_http_request_duration_seconds. Observations are in seconds.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_:][a-zA-Z0-9_:]*$`
	// +kubebuilder:validation:XValidation:rule="!(self.endsWith('_bucket') || self.endsWith('_sum') || self.endsWith('_count'))",message="name the histogram without its _bucket, _sum or _count suffix"
	Metric string `json:"metric"`

	// routeLabel is the label that names the route: route, handler, uri, path, endpoint, ...
	// Defaults to route.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	// +kubebuilder:validation:XValidation:rule="!(self in ['le', 'pod', 'namespace', '__name__'])",message="routeLabel cannot be le, pod, namespace or __name__: the histogram is read by those"
	RouteLabel string `json:"routeLabel,omitempty"`

	// statusLabel is the label that holds the response's status, e.g. code or status.
	// Defaults to code; a histogram without it counts every request as successful.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	// +kubebuilder:validation:XValidation:rule="!(self in ['le', 'pod', 'namespace', '__name__'])",message="statusLabel cannot be le, pod, namespace or __name__: the histogram is read by those"
	StatusLabel string `json:"statusLabel,omitempty"`

	// errorStatus is a regular expression (RE2, anchored as in PromQL) on statusLabel's value
	// that marks a failed request: it counts in the route's error share and is left out of its
	// latency (a fast failure is not a fast response). Defaults to 5.. (server errors).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-0-9A-Za-z_.|()\[\]*+?]+$`
	ErrorStatus string `json:"errorStatus,omitempty"`

	// top is how many routes of each workload are kept, the slowest by p95 first. Defaults to
	// 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	Top *int32 `json:"top,omitempty"`
}

// Defaults of RouteHistogram.
const (
	DefaultRouteLabel  = "route"
	DefaultStatusLabel = "code"
	DefaultErrorStatus = "5.."
	DefaultRouteTop    = 10
)

// Label is the route label in force.
func (r RouteHistogram) Label() string { return orDefault(r.RouteLabel, DefaultRouteLabel) }

// Status is the status label in force.
func (r RouteHistogram) Status() string { return orDefault(r.StatusLabel, DefaultStatusLabel) }

// Errors is the error-status expression in force.
func (r RouteHistogram) Errors() string { return orDefault(r.ErrorStatus, DefaultErrorStatus) }

// Keep is how many routes of a workload are kept.
func (r RouteHistogram) Keep() int {
	if r.Top == nil || *r.Top < 1 {
		return DefaultRouteTop
	}
	return int(*r.Top)
}
