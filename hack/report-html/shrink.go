package main

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"sort"
)

// shrink rewrites a screenshot with a palette of its 256 most frequent colours. A report page
// is mostly flat colours; only the edges of text and lines are antialiased, and those take
// the nearest colour of the palette, which the eye does not notice. It cuts Chromium's 24-bit
// PNGs to about a third, so the docs' images stay small.
func shrink(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	bounds := img.Bounds()
	rgba := image.NewRGBA(bounds)
	draw.Draw(rgba, bounds, img, bounds.Min, draw.Src)
	freq := map[color.RGBA]int{}
	for i := 0; i < len(rgba.Pix); i += 4 {
		freq[color.RGBA{rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], 255}]++
	}
	colors := make([]color.RGBA, 0, len(freq))
	for c := range freq {
		colors = append(colors, c)
	}
	sort.Slice(colors, func(i, j int) bool {
		if freq[colors[i]] != freq[colors[j]] {
			return freq[colors[i]] > freq[colors[j]]
		}
		a, b := colors[i], colors[j]
		return uint32(a.R)<<16|uint32(a.G)<<8|uint32(a.B) < uint32(b.R)<<16|uint32(b.G)<<8|uint32(b.B)
	})
	pal := color.Palette{}
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(bounds, pal)
	nearest := map[color.RGBA]uint8{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			i := rgba.PixOffset(x, y)
			c := color.RGBA{rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], 255}
			idx, ok := nearest[c]
			if !ok {
				idx = uint8(pal.Index(c))
				nearest[c] = idx
			}
			out.SetColorIndex(x, y, idx)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
