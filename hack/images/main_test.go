package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeTar writes a one-file tarball, as a root filesystem made elsewhere would be.
func writeTar(t *testing.T, path, name, body string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLayersBelowFilesAndOwnPath(t *testing.T) {
	dir := t.TempDir()
	base, extra, bin := filepath.Join(dir, "rootfs.tar"), filepath.Join(dir, "extra.tar"), filepath.Join(dir, "tool")
	writeTar(t, base, "etc/os-release", "debian")
	writeTar(t, extra, "opt/kafka/libs/kafka.jar", "jar")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	err := run([]string{"-tag", "perfexp/test:dev", "-out", out, "-entrypoint", "/bin/sh", "-user", "",
		"-layer", base, "-layer", extra, "-file", bin + ":/usr/local/bin/tool", "-env", "PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 {
		t.Fatalf("got %d layers, want rootfs, extra and files", len(layers))
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Env, []string{"PATH=/usr/bin:/bin"}) {
		t.Errorf("env = %v, want the caller's PATH only", cfg.Config.Env)
	}
}

func TestFilesOnlyKeepsRootPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	if err := run([]string{"-tag", "perfexp/test:dev", "-out", out, "-entrypoint", "/tool", "-file", bin + ":/tool", "-env", "A=b"}); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Env, []string{"PATH=/", "A=b"}) {
		t.Errorf("env = %v", cfg.Config.Env)
	}
}
