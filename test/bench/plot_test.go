package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestScalePlot(t *testing.T) {
	tests := []struct {
		name          string
		sizes         []Scale
		wantPolylines int
		wantNote      string
	}{
		{"three sizes out of order, floor and helm-operator at two", []Scale{
			{Instances: 10000, Seconds: 310, PeakRSSMiB: 420},
			{Instances: 100, Seconds: 4.2, FloorSeconds: 3.5, PeakRSSMiB: 61,
				HelmOperator: &SideRun{Seconds: 9.8, PeakRSSMiB: 80}},
			{Instances: 1000, Seconds: 31, FloorSeconds: 27, PeakRSSMiB: 118,
				HelmOperator: &SideRun{Seconds: 75, PeakRSSMiB: 240}},
		}, 5, ""},
		{"a series of one point is a marker alone", []Scale{
			{Instances: 100, Seconds: 4.2, FloorSeconds: 3.5, PeakRSSMiB: 61},
			{Instances: 1000, Seconds: 31, FloorSeconds: 27, PeakRSSMiB: 118,
				HelmOperator: &SideRun{Seconds: 75, PeakRSSMiB: 240}},
		}, 3, ""},
		{"NaN and Inf are left out", []Scale{
			{Instances: 100, Seconds: math.NaN(), PeakRSSMiB: 61},
			{Instances: 1000, Seconds: 31, PeakRSSMiB: math.Inf(1)},
			{Instances: 10000, Seconds: 310, PeakRSSMiB: 420},
		}, 2, ""},
		{"one size", []Scale{{Instances: 1000, Seconds: 31, PeakRSSMiB: 118}}, 0, "not enough sizes to plot"},
		{"no sizes", nil, 0, "not enough sizes to plot"},
		{"no figures", []Scale{{Instances: 100}, {Instances: 1000}}, 0, "nothing to plot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg := scalePlot(tt.sizes)
			polylines := polylinePoints(t, svg)
			if len(polylines) != tt.wantPolylines {
				t.Errorf("%d polylines, want %d", len(polylines), tt.wantPolylines)
			}
			for _, bad := range []string{"NaN", "Inf"} {
				if bytes.Contains(svg, []byte(bad)) {
					t.Errorf("the image contains %q", bad)
				}
			}
			if tt.wantNote != "" && !bytes.Contains(svg, []byte(tt.wantNote)) {
				t.Errorf("the image lacks the note %q", tt.wantNote)
			}
			if again := scalePlot(tt.sizes); !bytes.Equal(again, svg) {
				t.Error("a second call drew another image")
			}
			if len(polylines) == 0 {
				return
			}
			x := 0.0
			for i, point := range strings.Fields(polylines[0]) {
				px, _, _ := strings.Cut(point, ",")
				next, err := strconv.ParseFloat(px, 64)
				if err != nil {
					t.Fatalf("point %q: %v", point, err)
				}
				if i > 0 && next <= x {
					t.Errorf("point %d at x %.1f, not right of the one before at %.1f: %s", i, next, x, polylines[0])
				}
				x = next
			}
		})
	}
}

func TestScalePlotTickLabels(t *testing.T) {
	tests := []struct {
		tick tick
		want string
	}{
		{tick{5, -2}, "0.05"},
		{tick{5, -1}, "0.5"},
		{tick{1, 0}, "1"},
		{tick{2, 1}, "20"},
		{tick{1, 3}, "1,000"},
		{tick{1, 4}, "10,000"},
		{tick{5, 5}, "500,000"},
	}
	for _, tt := range tests {
		if got := tt.tick.label(); got != tt.want {
			t.Errorf("label of %d×10^%d = %q, want %q", tt.tick.mantissa, tt.tick.exponent, got, tt.want)
		}
	}
}

func TestScalePlotTicksCovering(t *testing.T) {
	tests := []struct {
		name      string
		low, high float64
		want      []string
	}{
		{"from below to above", 4.2, 310, []string{"2", "5", "10", "20", "50", "100", "200", "500"}},
		{"the ends on ticks", 10, 1000, []string{"10", "20", "50", "100", "200", "500", "1,000"}},
		{"one value on a tick", 100, 100, []string{"50", "100", "200"}},
		{"one value between ticks", 61, 61, []string{"50", "100"}},
		{"below one", 0.3, 0.7, []string{"0.2", "0.5", "1"}},
	}
	for _, tt := range tests {
		ticks := ticksCovering(math.Log10(tt.low), math.Log10(tt.high))
		got := make([]string, len(ticks))
		for i, tk := range ticks {
			got[i] = tk.label()
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: ticks %v, want %v", tt.name, got, tt.want)
		}
	}
}

// polylinePoints reads the image as XML, failing the test if it is not, and
// returns the points of its polylines in order.
func polylinePoints(t *testing.T, svg []byte) []string {
	t.Helper()
	var points []string
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		token, err := d.Token()
		if errors.Is(err, io.EOF) {
			return points
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		if e, ok := token.(xml.StartElement); ok && e.Name.Local == "polyline" {
			for _, a := range e.Attr {
				if a.Name.Local == "points" {
					points = append(points, a.Value)
				}
			}
		}
	}
}
