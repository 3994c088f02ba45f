package main

import (
	"archive/tar"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// runVerify checks a release's OCI archive as a registry or containerd would read it: one
// image index whose digest is the one in -digest-file (what the chart pins), every blob present
// with the digest and size its descriptor names (go-containerregistry's validate), a manifest
// for each -platform whose config says that platform, and a numeric non-root user.
//
//	images verify -archive dist/perfexp-manager-0.3.0.oci.tar \
//	  -digest-file dist/perfexp-manager-0.3.0.oci.tar.digest -platforms linux/amd64,linux/arm64
func runVerify(args []string) error {
	fs := flag.NewFlagSet("images verify", flag.ContinueOnError)
	archive := fs.String("archive", "", "OCI archive to check")
	digestFile := fs.String("digest-file", "", "file holding the index digest the archive must have")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/ARCH the index must hold")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *archive == "" || *digestFile == "" {
		fs.Usage()
		return errors.New("-archive and -digest-file are required")
	}
	want, err := os.ReadFile(*digestFile)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "oci-verify-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := extract(*archive, dir); err != nil {
		return fmt.Errorf("%s: %w", *archive, err)
	}
	got, err := verifyLayout(dir, strings.TrimSpace(string(want)), strings.Split(*platforms, ","))
	if err != nil {
		return fmt.Errorf("%s: %w", *archive, err)
	}
	fmt.Printf("%s: index %s, %s\n", filepath.Base(*archive), want[:len(want)-1], strings.Join(got, ", "))
	return nil
}

// verifyLayout checks the OCI layout in dir and returns the platforms it holds.
func verifyLayout(dir, wantDigest string, wantPlatforms []string) ([]string, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("not an OCI layout: %w", err)
	}
	rm, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(rm.Manifests) != 1 {
		return nil, fmt.Errorf("index.json names %d images, want 1", len(rm.Manifests))
	}
	if d := rm.Manifests[0].Digest.String(); d != wantDigest {
		return nil, fmt.Errorf("index digest %s, the digest file says %s", d, wantDigest)
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	// Every manifest, config and layer read back and hashed against its descriptor.
	if err := validate.Index(idx); err != nil {
		return nil, fmt.Errorf("index %s: %w", wantDigest, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			return nil, fmt.Errorf("manifest %s has no platform", desc.Digest)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		plat := desc.Platform.OS + "/" + desc.Platform.Architecture
		if cfg.OS+"/"+cfg.Architecture != plat {
			return nil, fmt.Errorf("manifest %s for %s holds a %s/%s config", desc.Digest, plat, cfg.OS, cfg.Architecture)
		}
		if !nonRoot(cfg) {
			return nil, fmt.Errorf("%s runs as user %q: want a numeric non-root user", plat, cfg.Config.User)
		}
		have = append(have, plat)
	}
	for _, p := range wantPlatforms {
		if !slices.Contains(have, p) {
			return nil, fmt.Errorf("no %s image (the index holds %s)", p, strings.Join(have, ", "))
		}
	}
	return have, nil
}

func nonRoot(cfg *v1.ConfigFile) bool {
	u := cfg.Config.User
	return u != "" && u != "0" && strings.Trim(u, "0123456789") == ""
}

// extract unpacks a tar archive into dst, refusing names that would leave it.
func extract(archive, dst string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dst, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dst)+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the archive's directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil { //nolint:gosec // a release's own archive, checked blob by blob after
				_ = out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: type %c is not a file or directory", h.Name, h.Typeflag)
		}
	}
}
