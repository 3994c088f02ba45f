package result

// RouteResult is one route of a service as the service's own request-duration histogram saw
// it over the measured window: server-side latency, without the network and the load
// generator in it.
type RouteResult struct {
	// Workload names the service ("Deployment/shop/api"), Route the value of the histogram's
	// route label, Metric the histogram.
	Workload string `json:"workload"`
	Route    string `json:"route"`
	Metric   string `json:"metric"`
	// Requests, Errors, Rate and ErrorPercent count every request of the route; the
	// latencies (milliseconds) are of the successful ones, those whose status the route
	// histogram's errorStatus does not match.
	RequestStats `json:",inline"`
}

// RouteIntervals is one route's per-interval data, on the intervals of IntervalData: Series
// counts its requests and failures and holds its successful requests' latency histograms.
type RouteIntervals struct {
	Workload string         `json:"workload"`
	Route    string         `json:"route"`
	Series   IntervalSeries `json:"series"`
}

// FindRoute is the per-interval data of a workload's route, nil when the run has none.
func (d *IntervalData) FindRoute(workload, route string) *RouteIntervals {
	if d == nil {
		return nil
	}
	for i := range d.Routes {
		if r := &d.Routes[i]; r.Workload == workload && r.Route == route {
			return r
		}
	}
	return nil
}

// FindRoute is a route of the result, nil when it has none.
func (r *Result) FindRoute(workload, route string) *RouteResult {
	if r == nil {
		return nil
	}
	for i := range r.Routes {
		if rr := &r.Routes[i]; rr.Workload == workload && rr.Route == route {
			return rr
		}
	}
	return nil
}
