// Command images writes a docker-archive tarball holding static binaries on an empty base
// image, ready for `ctr -n k8s.io images import`. The local cluster has no image registry and no
// Docker engine, so every image it runs is assembled here from files built on the host.
//
// Usage (a docker-archive for the local cluster; `images oci` writes a release's OCI archive,
// oci.go, and `images verify` checks one, verify.go):
//
//	go run . -tag perfexp/k6:v1.8.1 -out bin/images/k6.tar -file bin/k6:/k6 -entrypoint /k6
//
// A root filesystem made elsewhere (e.g. by mmdebstrap) goes in as whole layers, below the files:
//
//	go run . -tag perfexp/platform-debian:dev -out bin/images/platform-debian.tar \
//	  -layer rootfs.tar -layer kafka.tar -entrypoint /bin/sh -user ""
//
// The output is reproducible: timestamps are fixed, so an unchanged binary yields a byte-identical
// tarball and callers can skip re-importing it by comparing checksums.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// epoch is the fixed timestamp of every file and of the image, for reproducible digests.
var epoch = time.Unix(0, 0).UTC()

// nonRootUID is the conventional "nonroot" user of distroless images; Kubernetes' runAsNonRoot
// needs a numeric user in the image config to verify it.
const nonRootUID = "65532"

type fileSpec struct {
	src, dst string
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	runner := run
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "oci" {
		runner, args = runOCI, args[1:]
	}
	if len(args) > 0 && args[0] == "verify" {
		runner, args = runVerify, args[1:]
	}
	if err := runner(args); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	tag := fs.String("tag", "", "image reference to record in the tarball, e.g. perfexp/k6:v1.8.1")
	out := fs.String("out", "", "tarball to write")
	entrypoint := fs.String("entrypoint", "", "entrypoint path inside the image (space-separated for arguments)")
	user := fs.String("user", nonRootUID, "user the entrypoint runs as (numeric, empty for root)")
	workdir := fs.String("workdir", "/", "working directory")
	var files, env, layers multiFlag
	fs.Var(&files, "file", "SRC:DST file to add (repeatable); DST is an absolute path in the image")
	fs.Var(&layers, "layer", "uncompressed tarball added whole as a layer below the files (repeatable, in order)")
	fs.Var(&env, "env", "KEY=VALUE environment variable (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tag == "" || *out == "" || len(files)+len(layers) == 0 || *entrypoint == "" {
		fs.Usage()
		return errors.New("-tag, -out, -entrypoint and at least one -file or -layer are required")
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("parsing -tag: %w", err)
	}
	var specs []fileSpec
	for _, f := range files {
		src, dst, ok := strings.Cut(f, ":")
		if !ok || !path.IsAbs(dst) {
			return fmt.Errorf("-file %q: want SRC:/absolute/DST", f)
		}
		specs = append(specs, fileSpec{src: src, dst: path.Clean(dst)})
	}

	img, err := buildImage(layers, specs)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	// ctr imports only the host platform by default, so the config must name it.
	cfg.OS = "linux"
	cfg.Architecture = "amd64"
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = strings.Fields(*entrypoint)
	cfg.Config.User = *user
	cfg.Config.WorkingDir = *workdir
	cfg.Config.Env = withPath(env)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return fmt.Errorf("setting config: %w", err)
	}

	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	tmp := *out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	return os.Rename(tmp, *out)
}

// buildImage stacks the given tarballs as layers, in order, and the files (if any) as one layer
// on top.
func buildImage(tarballs []string, specs []fileSpec) (v1.Image, error) {
	var all []v1.Layer
	for _, t := range tarballs {
		// The file is gzipped on the fly when the image is written: the docker-archive holds
		// compressed layers, and the tarball given here is kept as it is.
		l, err := tarball.LayerFromFile(t)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", t, err)
		}
		all = append(all, l)
	}
	if len(specs) > 0 {
		layerBytes, err := buildLayer(specs)
		if err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(layerBytes)), nil
		})
		if err != nil {
			return nil, fmt.Errorf("creating layer: %w", err)
		}
		all = append(all, l)
	}
	img, err := mutate.AppendLayers(empty.Image, all...)
	if err != nil {
		return nil, fmt.Errorf("appending layers: %w", err)
	}
	return img, nil
}

// withPath returns the image's environment: PATH=/ (where the static binaries live) unless the
// caller sets its own PATH, as an image on a full root filesystem does.
func withPath(env []string) []string {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return append([]string(nil), env...)
		}
	}
	return append([]string{"PATH=/"}, env...)
}

// buildLayer returns an uncompressed tar of the given files plus a world-writable /tmp, which
// programs such as k6 and the Go runtime expect even on an otherwise empty root filesystem.
func buildLayer(specs []fileSpec) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(dir string, mode int64) error {
		if dir == "/" || dir == "." || dirs[dir] {
			return nil
		}
		dirs[dir] = true
		return tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeDir, Name: strings.TrimPrefix(dir, "/") + "/", Mode: mode, ModTime: epoch,
		})
	}
	if err := addDir("/tmp", 0o1777); err != nil {
		return nil, err
	}
	for _, s := range specs {
		// Parents first, outermost first, so extraction never meets a file before its directory.
		var parents []string
		for d := path.Dir(s.dst); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := addDir(d, 0o755); err != nil {
				return nil, err
			}
		}
		data, err := os.ReadFile(s.src)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", s.src, err)
		}
		st, err := os.Stat(s.src)
		if err != nil {
			return nil, err
		}
		mode := int64(0o644)
		if st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: strings.TrimPrefix(s.dst, "/"), Mode: mode,
			Size: int64(len(data)), ModTime: epoch,
		}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
