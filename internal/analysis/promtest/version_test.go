package promtest

import (
	"slices"
	"testing"
)

func TestParseVersionReadsTheReleaseOfEveryBuildWeRun(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    Version
		wantErr bool
	}{
		{name: "debian 2.42", out: "prometheus, version 2.42.0+ds (branch: debian/sid, revision: 2.42.0+ds-5+deb12u1)\n  build user: team", want: Version{2, 42, 0}},
		{name: "hack/prometheus3.sh", out: "prometheus, version 3.16.0 (branch: module, revision: v0.316.0)\n", want: Version{3, 16, 0}},
		{name: "release with v prefix", out: "prometheus, version v3.9.1 (branch: HEAD)", want: Version{3, 9, 1}},
		{name: "built without -X version flags", out: "prometheus, version  (branch: , revision: unknown)", wantErr: true},
		{name: "not prometheus", out: "promtool, version 2.42.0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVersion(tt.out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFlagsAskForNativeHistogramsOnlyWhereTheFeatureFlagStillWorks(t *testing.T) {
	const nh = "--enable-feature=native-histograms"
	tests := []struct {
		v      Version
		wantNH bool
	}{
		{Version{2, 42, 0}, true},
		{Version{3, 0, 0}, true},
		{Version{3, 8, 1}, true},
		{Version{3, 9, 0}, false},
		{Version{3, 16, 0}, false},
		{Version{4, 0, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.v.String(), func(t *testing.T) {
			f := Flags(tt.v)
			if !slices.Contains(f, "--web.enable-remote-write-receiver") {
				t.Errorf("%v: no remote-write receiver in %v", tt.v, f)
			}
			if got := slices.Contains(f, nh); got != tt.wantNH {
				t.Errorf("%v: native-histograms feature flag passed = %v, want %v (%v)", tt.v, got, tt.wantNH, f)
			}
		})
	}
}
