package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// runOCI writes one multi-platform image as an OCI image layout in a tar archive (what
// `skopeo copy oci-archive:` and `ctr images import` read): an image index with one manifest
// per -platform, each holding that platform's binary. Every timestamp is fixed, so the same
// binaries give the same digests; it prints the index's digest, then each platform's.
//
//	images oci -tag perfexp/manager:0.3.0 -out dist/manager.oci.tar -entrypoint /manager \
//	  -dst /manager -platform linux/amd64=bin/manager-amd64 -platform linux/arm64=bin/manager-arm64
func runOCI(args []string) error {
	fs := flag.NewFlagSet("images oci", flag.ContinueOnError)
	tag := fs.String("tag", "", "image reference recorded in the archive, e.g. perfexp/manager:0.3.0")
	out := fs.String("out", "", "archive to write")
	entrypoint := fs.String("entrypoint", "", "entrypoint path inside the image")
	dst := fs.String("dst", "", "absolute path of the binary inside the image")
	user := fs.String("user", nonRootUID, "user the entrypoint runs as (numeric)")
	digestOut := fs.String("digest-file", "", "also write the index's digest to this file")
	var platforms multiFlag
	fs.Var(&platforms, "platform", "OS/ARCH=BINARY (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tag == "" || *out == "" || *entrypoint == "" || !path.IsAbs(*dst) || len(platforms) == 0 {
		fs.Usage()
		return errors.New("-tag, -out, -entrypoint, an absolute -dst and at least one -platform are required")
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("parsing -tag: %w", err)
	}

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var lines []string
	for _, p := range platforms {
		plat, bin, ok := strings.Cut(p, "=")
		osName, arch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 {
			return fmt.Errorf("-platform %q: want OS/ARCH=BINARY", p)
		}
		img, err := platformImage(bin, *dst, osName, arch, *entrypoint, *user)
		if err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}},
		})
		lines = append(lines, fmt.Sprintf("%s %s", plat, d))
	}
	idxDigest, err := idx.Digest()
	if err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// containerd names the imported image after io.containerd.image.name; the OCI annotation
	// holds the tag, as skopeo and oras write it.
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          containerdName(ref),
		"org.opencontainers.image.ref.name": ref.TagStr(),
	})); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := tarDir(dir, *out); err != nil {
		return err
	}
	fmt.Printf("index %s\n", idxDigest)
	for _, l := range lines {
		fmt.Println(l)
	}
	if *digestOut != "" {
		return os.WriteFile(*digestOut, []byte(idxDigest.String()+"\n"), 0o644)
	}
	return nil
}

// platformImage is one platform's image: the binary and /tmp on an empty base, OCI media types.
func platformImage(bin, dst, osName, arch, entrypoint, user string) (v1.Image, error) {
	layerBytes, err := buildLayer([]fileSpec{{src: bin, dst: path.Clean(dst)}})
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("creating layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS = osName
	cfg.Architecture = arch
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = strings.Fields(entrypoint)
	cfg.Config.User = user
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/"}
	return mutate.ConfigFile(img, cfg)
}

// tarDir archives dir's files in name order with fixed owners and times.
func tarDir(dir, out string) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Mode: 0o644, Typeflag: tar.TypeReg, Size: st.Size()}
		if st.IsDir() {
			h = &tar.Header{Name: filepath.ToSlash(rel) + "/", ModTime: epoch, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !st.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// containerdName is the name containerd and the kubelet give the image: Docker Hub's registry
// is docker.io there (go-containerregistry says index.docker.io), so that a pod's
// perfexp/manager@sha256:... finds the imported image.
func containerdName(ref name.Tag) string {
	registry := ref.Context().RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + ref.Context().RepositoryStr() + ":" + ref.TagStr()
}
