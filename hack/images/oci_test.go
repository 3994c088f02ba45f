package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// An OCI archive is one index with a manifest per platform, each image's config naming its
// platform, and the same binaries give the same bytes (the digests a release pins).
func TestOCIArchiveIsReproducibleAndMultiPlatform(t *testing.T) {
	dir := t.TempDir()
	for _, arch := range []string{"amd64", "arm64"} {
		if err := os.WriteFile(filepath.Join(dir, "bin-"+arch), []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := func(out string) []byte {
		t.Helper()
		err := runOCI([]string{"-tag", "example.com/perfexp/manager:0.3.0", "-entrypoint", "/manager", "-dst", "/manager",
			"-out", out, "-digest-file", out + ".digest",
			"-platform", "linux/amd64=" + filepath.Join(dir, "bin-amd64"), "-platform", "linux/arm64=" + filepath.Join(dir, "bin-arm64")})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := build(filepath.Join(dir, "a.tar"))
	if second := build(filepath.Join(dir, "b.tar")); string(first) != string(second) {
		t.Fatal("two builds of the same binaries differ")
	}

	unpacked := filepath.Join(dir, "layout")
	if err := os.MkdirAll(unpacked, 0o755); err != nil {
		t.Fatal(err)
	}
	untar(t, filepath.Join(dir, "a.tar"), unpacked)
	root, err := layout.ImageIndexFromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := root.IndexManifest()
	if err != nil || len(rm.Manifests) != 1 {
		t.Fatalf("index.json: %v, %v", rm, err)
	}
	if got := rm.Manifests[0].Annotations["io.containerd.image.name"]; got != "example.com/perfexp/manager:0.3.0" {
		t.Errorf("containerd name %q", got)
	}
	digest, _ := os.ReadFile(filepath.Join(dir, "a.tar.digest"))
	if strings.TrimSpace(string(digest)) != rm.Manifests[0].Digest.String() {
		t.Errorf("digest file %q, index %s", digest, rm.Manifests[0].Digest)
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		if cfg.OS+"/"+cfg.Architecture != p || cfg.Config.User != nonRootUID || !cfg.Created.Equal(epoch) {
			t.Errorf("%s: config %s/%s user %q created %v", p, cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Created)
		}
		platforms = append(platforms, p)
	}
	if strings.Join(platforms, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("platforms %v", platforms)
	}
}

func untar(t *testing.T, archive, dst string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestContainerdName(t *testing.T) {
	tests := map[string]string{
		"perfexp/manager:0.3.0":                 "docker.io/perfexp/manager:0.3.0",
		"nginx:1.27":                            "docker.io/library/nginx:1.27",
		"ghcr.io/perfexp/manager:0.3.0":         "ghcr.io/perfexp/manager:0.3.0",
		"registry.example.com:5000/p/k6:v1.8.1": "registry.example.com:5000/p/k6:v1.8.1",
	}
	for in, want := range tests {
		ref, err := name.NewTag(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := containerdName(ref); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
