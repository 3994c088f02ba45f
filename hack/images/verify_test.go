package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verify accepts the archive `images oci` writes and refuses one that does not hold what the
// release says: another digest, a platform missing, a blob changed after the fact, a path
// leaving the archive's directory.
func TestVerifyOCIArchive(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("a static binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "manager.oci.tar")
	if err := runOCI([]string{"-tag", "perfexp/manager:0.3.0", "-entrypoint", "/manager", "-dst", "/manager", "-out", archive,
		"-digest-file", archive + ".digest", "-platform", "linux/amd64=" + bin, "-platform", "linux/arm64=" + bin}); err != nil {
		t.Fatal(err)
	}
	if err := runVerify([]string{"-archive", archive, "-digest-file", archive + ".digest"}); err != nil {
		t.Fatalf("the archive images oci wrote: %v", err)
	}

	wrongDigest := filepath.Join(dir, "wrong.digest")
	_ = os.WriteFile(wrongDigest, []byte("sha256:"+strings.Repeat("0", 64)+"\n"), 0o644)
	tampered := filepath.Join(dir, "tampered.oci.tar")
	rewriteTar(t, archive, tampered, func(name string, data []byte) []byte {
		// A layer (gzip): change one byte, keep its size.
		if strings.HasPrefix(name, "blobs/sha256/") && len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
			data = append([]byte(nil), data...)
			data[len(data)/2] ^= 0xff
		}
		return data
	})
	escaping := filepath.Join(dir, "escaping.tar")
	writeEntries(t, escaping, map[string]string{"../outside": "x"})

	tests := []struct {
		name, archive, digest, platforms, says string
	}{
		{name: "another digest", archive: archive, digest: wrongDigest, says: "the digest file says"},
		{name: "a platform missing", archive: archive, digest: archive + ".digest", platforms: "linux/amd64,windows/amd64", says: "no windows/amd64 image"},
		{name: "a blob changed", archive: tampered, digest: archive + ".digest", says: "validating layers"},
		{name: "a path outside", archive: escaping, digest: archive + ".digest", says: "leaves the archive's directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-archive", tt.archive, "-digest-file", tt.digest}
			if tt.platforms != "" {
				args = append(args, "-platforms", tt.platforms)
			}
			err := runVerify(args)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("got %v, want an error saying %q", err, tt.says)
			}
		})
	}
}

func rewriteTar(t *testing.T, in, out string, edit func(name string, data []byte) []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := extract(in, dir); err != nil {
		t.Fatal(err)
	}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, edit(filepath.ToSlash(rel), data), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tarDir(dir, out); err != nil {
		t.Fatal(err)
	}
}

func writeEntries(t *testing.T, out string, entries map[string]string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for name, body := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}
