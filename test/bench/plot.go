package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The image is two panels side by side; within a panel, the plot area
// leaves room above for the title and legend, left and below for the tick
// labels.
const (
	plotWidth, plotHeight = 900, 360
	panelWidth            = plotWidth / 2
	plotLeft, plotRight   = 60, panelWidth - 20
	plotTop, plotBottom   = 56, plotHeight - 44
	// xInset keeps the markers of the smallest and largest size off the frame.
	xInset = 12
	// xLabelGap is the least distance between the centres of two Instances
	// labels that keeps "10,000" clear of its neighbours.
	xLabelGap = 44
	// maxTicks is the most ticks an axis shows at 1, 2 and 5; beyond, 12px
	// labels crowd, and it shows the decades alone.
	maxTicks = 12
	// logSlack absorbs the rounding of log10 of a value that is on a tick.
	logSlack = 1e-9
)

const (
	kudoColour         = "#1f77b4"
	floorColour        = "#7f7f7f"
	helmOperatorColour = "#d62728"
)

// scalePlot draws time and memory against the number of Instances, from the
// scale sizes of a report, as one SVG image of two panels side by side.
func scalePlot(sizes []Scale) []byte {
	sizes = slices.SortedStableFunc(slices.Values(sizes), func(a, b Scale) int { return cmp.Compare(a.Instances, b.Instances) })
	var instances []int
	for _, s := range sizes {
		if s.Instances > 0 {
			instances = append(instances, s.Instances)
		}
	}
	instances = slices.Compact(instances)

	helmOperatorSeconds := func(s Scale) float64 {
		if s.HelmOperator == nil {
			return 0
		}
		return s.HelmOperator.Seconds
	}
	helmOperatorRSS := func(s Scale) float64 {
		if s.HelmOperator == nil {
			return 0
		}
		return s.HelmOperator.PeakRSSMiB
	}
	timePanel := panel{
		title: "time to all COMPLETE (s)",
		series: []plotSeries{
			seriesOf("kudo-ng", kudoColour, sizes, func(s Scale) float64 { return s.Seconds }),
			seriesOf("floor", floorColour, sizes, func(s Scale) float64 { return s.FloorSeconds }),
			seriesOf("helm-operator", helmOperatorColour, sizes, helmOperatorSeconds),
		},
		linear: true,
	}
	memoryPanel := panel{
		title: "manager peak RSS (MiB)",
		series: []plotSeries{
			seriesOf("kudo-ng", kudoColour, sizes, func(s Scale) float64 { return s.PeakRSSMiB }),
			seriesOf("helm-operator", helmOperatorColour, sizes, helmOperatorRSS),
		},
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`font-family="sans-serif" font-size="12">`+"\n", plotWidth, plotHeight, plotWidth, plotHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotWidth, plotHeight)
	timePanel.draw(&b, 0, instances)
	memoryPanel.draw(&b, panelWidth, instances)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

type plotPoint struct{ instances, value float64 }

type plotSeries struct {
	name, colour string
	points       []plotPoint
}

// seriesOf takes a figure of each size, leaving out those a log axis has no
// place for: a zero is a figure not measured (no floor, no helm-operator run).
func seriesOf(name, colour string, sizes []Scale, figure func(Scale) float64) plotSeries {
	s := plotSeries{name: name, colour: colour}
	for _, size := range sizes {
		if v := figure(size); size.Instances > 0 && v > 0 && !math.IsInf(v, 1) {
			s.points = append(s.points, plotPoint{float64(size.Instances), v})
		}
	}
	return s
}

type panel struct {
	title  string
	series []plotSeries
	// linear draws, through the first point of the first series, where it
	// would go if its cost per Instance stayed flat.
	linear bool
}

// draw draws the panel with its left edge at left, against the Instances
// of all sizes.
func (p panel) draw(b *strings.Builder, left float64, instances []int) {
	fmt.Fprintf(b, `<text x="%.1f" y="20" font-weight="bold">%s</text>`+"\n", left+plotLeft, p.title)
	// The frame goes over the grid lines at the ends of the axes.
	defer fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n",
		left+plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">Instances</text>`+"\n",
		left+(plotLeft+plotRight)/2, plotHeight-8)
	var logs []float64
	for _, s := range p.series {
		for _, pt := range s.points {
			logs = append(logs, math.Log10(pt.value))
		}
	}
	switch {
	case len(instances) < 2:
		p.note(b, left, "not enough sizes to plot")
		return
	case len(logs) == 0:
		p.note(b, left, "nothing to plot")
		return
	}

	ticks := ticksCovering(slices.Min(logs), slices.Max(logs))
	f := logFrame{
		left: left,
		xLow: math.Log10(float64(instances[0])), xHigh: math.Log10(float64(instances[len(instances)-1])),
		yLow: ticks[0].log(), yHigh: ticks[len(ticks)-1].log(),
	}
	if len(ticks) > maxTicks {
		ticks = slices.DeleteFunc(ticks, func(t tick) bool { return t.mantissa != 1 })
	}
	lastLabel := math.Inf(-1)
	for _, n := range instances {
		x := f.x(math.Log10(float64(n)))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", x, plotTop, x, plotBottom)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`+"\n", x, plotBottom, x, plotBottom+4)
		if x-lastLabel >= xLabelGap {
			fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
				x, plotBottom+17, withThousands(fmt.Sprint(n)))
			lastLabel = x
		}
	}
	for _, t := range ticks {
		y := f.y(t.log())
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n",
			left+plotLeft, y, left+plotRight, y)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n",
			left+plotLeft-4, y, left+plotLeft, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left+plotLeft-6, y+4, t.label())
	}
	if p.linear {
		f.drawLinear(b, p.series[0])
	}
	legendX := left + plotLeft
	for _, s := range p.series {
		if len(s.points) == 0 {
			continue
		}
		f.drawSeries(b, s)
		fmt.Fprintf(b, `<line x1="%.1f" y1="36" x2="%.1f" y2="36" stroke="%s" stroke-width="1.5"/>`+"\n",
			legendX, legendX+18, s.colour)
		fmt.Fprintf(b, `<circle cx="%.1f" cy="36" r="3" fill="%s"/>`+"\n", legendX+9, s.colour)
		fmt.Fprintf(b, `<text x="%.1f" y="40">%s</text>`+"\n", legendX+24, s.name)
		// About 7px a character at 12px, and a gap to the next entry.
		legendX += float64(24 + 7*len(s.name) + 16)
	}
}

// note says, in the middle of the plot area, why it is empty.
func (p panel) note(b *strings.Builder, left float64, text string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n",
		left+(plotLeft+plotRight)/2, (plotTop+plotBottom)/2, text)
}

// logFrame places log10 of Instances and of a figure in the image.
type logFrame struct {
	left                     float64
	xLow, xHigh, yLow, yHigh float64
}

func (f logFrame) x(l float64) float64 {
	return f.left + plotLeft + xInset + (l-f.xLow)/(f.xHigh-f.xLow)*(plotRight-plotLeft-2*xInset)
}

func (f logFrame) y(l float64) float64 {
	return plotBottom - (l-f.yLow)/(f.yHigh-f.yLow)*(plotBottom-plotTop)
}

func (f logFrame) drawSeries(b *strings.Builder, s plotSeries) {
	points := make([]string, len(s.points))
	var markers strings.Builder
	for i, pt := range s.points {
		x, y := f.x(math.Log10(pt.instances)), f.y(math.Log10(pt.value))
		points[i] = fmt.Sprintf("%.1f,%.1f", x, y)
		fmt.Fprintf(&markers, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, s.colour)
	}
	// A single point is a marker alone: a line needs two.
	if len(points) > 1 {
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n",
			strings.Join(points, " "), s.colour)
	}
	b.WriteString(markers.String())
}

// drawLinear draws a line of slope 1 through the first point of s: a series
// that falls below it costs less per Instance as the sizes grow.
func (f logFrame) drawLinear(b *strings.Builder, s plotSeries) {
	if len(s.points) == 0 {
		return
	}
	fromX, fromY := math.Log10(s.points[0].instances), math.Log10(s.points[0].value)
	// It ends where it leaves the frame, at its right or its top.
	toX := min(f.xHigh, fromX+f.yHigh-fromY)
	if toX <= fromX {
		return
	}
	x1, y1 := f.x(fromX), f.y(fromY)
	x2, y2 := f.x(toX), f.y(fromY+toX-fromX)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="1 3"/>`+"\n",
		x1, y1, x2, y2)
	angle := math.Atan2(y2-y1, x2-x1) * 180 / math.Pi
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(%.1f)" dx="-4" dy="-4" text-anchor="end" fill="#666">linear</text>`+"\n",
		x2, y2, angle)
}

// tick is mantissa × 10^exponent, the mantissa 1, 2 or 5. Kept as integers,
// its label is exact however large or small.
type tick struct{ mantissa, exponent int }

func (t tick) log() float64 { return float64(t.exponent) + math.Log10(float64(t.mantissa)) }

// label writes the tick as people read it: "0.05", "20", "10,000".
func (t tick) label() string {
	if t.exponent < 0 {
		return "0." + strings.Repeat("0", -t.exponent-1) + fmt.Sprint(t.mantissa)
	}
	return withThousands(fmt.Sprint(t.mantissa) + strings.Repeat("0", t.exponent))
}

// ticksCovering are the ticks from the last at or below low to the first at
// or above high, both log10 of a figure: at least two, so that the axis has
// a length.
func ticksCovering(low, high float64) []tick {
	var candidates []tick
	for e := int(math.Floor(low)) - 1; e <= int(math.Ceil(high))+1; e++ {
		for _, m := range []int{1, 2, 5} {
			candidates = append(candidates, tick{m, e})
		}
	}
	first := 0
	for i, t := range candidates {
		if t.log() <= low+logSlack {
			first = i
		}
	}
	last := slices.IndexFunc(candidates, func(t tick) bool { return t.log() >= high-logSlack })
	if first == last {
		first, last = first-1, last+1
	}
	return candidates[first : last+1]
}

// withThousands separates the thousands of a number's digits with commas.
func withThousands(digits string) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
