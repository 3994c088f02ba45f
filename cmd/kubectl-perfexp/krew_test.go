package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/perfexp/perfexp/internal/testenv"
)

// krewPlugin is the part of krew's Plugin kind (krew.googlecontainertools.github.com/v1alpha2)
// that krew checks when it installs a plugin.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// The krew manifest installs this plugin on Linux, macOS and Windows, amd64 and arm64, each from
// the archive plugins/release.sh names for that platform, with its completion helper, and says
// what every command does.
func TestKrewManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "plugins", "perfexp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("the manifest has fields krew does not know: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "perfexp" {
		t.Errorf("apiVersion %q kind %q name %q: want krew's v1alpha2 Plugin named perfexp", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	// krew-index wants a semantic version with a leading v; release.sh replaces v0.0.0.
	if p.Spec.Version != "v0.0.0" || p.Spec.Homepage == "" || len(p.Spec.ShortDescription) > 50 {
		t.Errorf("version %q, homepage %q, short description of %d characters (krew shows 50)", p.Spec.Version, p.Spec.Homepage, len(p.Spec.ShortDescription))
	}
	for _, verb := range []string{"watch", "compare", "report", "queue", "abort"} {
		if !strings.Contains(p.Spec.Description, verb) {
			t.Errorf("the description does not mention %s", verb)
		}
	}
	want := map[string]bool{"linux/amd64": true, "linux/arm64": true, "darwin/amd64": true, "darwin/arm64": true,
		"windows/amd64": true, "windows/arm64": true}
	placeholder := regexp.MustCompile(`^SHA256_[A-Z]+_[A-Z0-9]+$`)
	for _, pl := range p.Spec.Platforms {
		goos, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		key := goos + "/" + arch
		if !want[key] {
			t.Errorf("unexpected or repeated platform %s", key)
			continue
		}
		delete(want, key)
		if wantURI := "https://github.com/perfexp/perfexp/releases/download/v0.0.0/kubectl-perfexp_v0.0.0_" + goos + "_" + arch + ".tar.gz"; pl.URI != wantURI {
			t.Errorf("%s: uri %s, want %s (the name release.sh gives the archive)", key, pl.URI, wantURI)
		}
		if pl.SHA256 != "SHA256_"+strings.ToUpper(goos+"_"+arch) || !placeholder.MatchString(pl.SHA256) {
			t.Errorf("%s: sha256 %q is not the placeholder release.sh fills in", key, pl.SHA256)
		}
		copied := map[string]bool{}
		for _, f := range pl.Files {
			copied[f.From] = true
		}
		bin, complete := "kubectl-perfexp", "kubectl_complete-perfexp"
		if goos == "windows" {
			bin, complete = "kubectl-perfexp.exe", "kubectl_complete-perfexp.bat"
		}
		if pl.Bin != bin || !copied[bin] || !copied[complete] || !copied["LICENSE"] {
			t.Errorf("%s: bin %q, files %v: want the %s binary, its completion helper %s and the LICENSE", key, pl.Bin, pl.Files, bin, complete)
		}
	}
	for missing := range want {
		t.Errorf("no platform %s", missing)
	}
	// krew links only bin: the helper ships in the archive, and the manifest must say it has
	// to be linked by hand rather than suggest krew put it on the PATH.
	if !strings.Contains(p.Spec.Caveats, "kubectl_complete-perfexp") || !strings.Contains(p.Spec.Caveats, "does not link it") {
		t.Errorf("the caveats do not say how to put the completion helper on the PATH: %q", p.Spec.Caveats)
	}
	helper, err := os.ReadFile(filepath.Join(testenv.Root(), "plugins", "kubectl_complete-perfexp"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(helper), "krew users: in ~/.krew/bin") || !strings.Contains(string(helper), "links only kubectl-perfexp") {
		t.Errorf("the helper's comment says krew links it:\n%s", helper)
	}
}
