package loadgen

import (
	"context"
	"sync"
	"time"
)

// Resources is the server's memory and goroutines sampled over the
// measured window (Config.SampleInterval), with their trends: what a soak
// watches for leaks.
type Resources struct {
	// Interval is between samples, in seconds.
	Interval float64 `json:"interval_s"`
	// RSSSource and GoroutineSource say where the numbers came from (as
	// Probe.Source; the goroutines from go_goroutines of the server's
	// /metrics); empty when not sampled.
	RSSSource       string `json:"rss_source,omitempty"`
	GoroutineSource string `json:"goroutine_source,omitempty"`
	// Samples are in time order; a figure not sampled is 0.
	Samples []ResourceSample `json:"samples"`
	// RSS (bytes) and Goroutines summarize the samples; nil when none
	// were taken.
	RSS        *Trend `json:"rss,omitempty"`
	Goroutines *Trend `json:"goroutines,omitempty"`
}

// ResourceSample is the server's use at one moment.
type ResourceSample struct {
	// At is the time since the window started, in seconds.
	At         float64 `json:"t_s"`
	RSS        int64   `json:"rss"`
	Goroutines int64   `json:"goroutines"`
}

// Trend summarizes a series of samples.
type Trend struct {
	Samples int     `json:"samples"`
	First   float64 `json:"first"`
	Last    float64 `json:"last"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	// PerHour is the least-squares slope of the samples, in units per
	// hour: about 0 for a server that does not grow.
	PerHour float64 `json:"per_hour"`
	// LatePerHour is the slope over the second half of the samples
	// alone: a server's memory grows at first, as its channels fill up to
	// their retention (ttl), and is flat from then on if nothing leaks.
	LatePerHour float64 `json:"late_per_hour"`
}

// newTrend summarizes the points (x in seconds); nil without any.
func newTrend(xs, ys []float64) *Trend {
	if len(ys) == 0 {
		return nil
	}
	t := &Trend{Samples: len(ys), First: ys[0], Last: ys[len(ys)-1], Min: ys[0], Max: ys[0]}
	for _, y := range ys {
		t.Min, t.Max = min(t.Min, y), max(t.Max, y)
	}
	t.PerHour = slope(xs, ys) * 3600
	half := len(ys) / 2
	t.LatePerHour = slope(xs[half:], ys[half:]) * 3600
	return t
}

// slope is the least-squares slope of y over x; 0 for fewer than two
// distinct x.
func slope(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var mx, my float64
	for i, y := range ys {
		mx += xs[i]
		my += y
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i, y := range ys {
		dx := xs[i] - mx
		sxy += dx * (y - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// sampler samples the server over the window on its own goroutine.
type sampler struct {
	r      *run
	start  time.Time
	stop   context.CancelFunc
	wg     sync.WaitGroup
	rss    bool // the server probe answers
	gor    bool // the metrics probe answers
	series []ResourceSample
}

// startSampler starts sampling, when the configuration asks for it and
// there is something to sample.
func (r *run) startSampler(ctx context.Context) *sampler {
	s := &sampler{r: r, start: time.Now(), stop: func() {}}
	if r.cfg.SampleInterval <= 0 || (r.opts.Server == nil && r.opts.Metrics == nil) {
		return s
	}
	ctx, s.stop = context.WithCancel(ctx)
	s.wg.Go(func() {
		t := time.NewTicker(r.cfg.SampleInterval)
		defer t.Stop()
		for {
			s.take(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return s
}

// take records one sample (the sampler's goroutine, or end).
func (s *sampler) take(ctx context.Context) {
	smp := ResourceSample{At: time.Since(s.start).Seconds()}
	if p := s.r.opts.Server; p != nil {
		if v, err := p.Sample(ctx); err == nil {
			smp.RSS, s.rss = v.RSS, true
		} else if ctx.Err() == nil {
			s.r.problems.add("probe", err)
		}
	}
	if m := s.r.opts.Metrics; m != nil {
		if v, err := m.Scrape(ctx); err == nil {
			if g, ok := v["go_goroutines"]; ok {
				smp.Goroutines, s.gor = int64(g), true
			}
		} else if ctx.Err() == nil {
			s.r.problems.add("metrics", err)
		}
	}
	if ctx.Err() == nil {
		s.series = append(s.series, smp)
	}
}

// end stops sampling, takes a last sample, and summarizes them into
// res.Resources (none when nothing was sampled).
func (s *sampler) end(ctx context.Context, res *Result) {
	s.stop()
	s.wg.Wait()
	if s.r.cfg.SampleInterval <= 0 || (s.r.opts.Server == nil && s.r.opts.Metrics == nil) {
		return
	}
	s.take(ctx)
	rs := &Resources{Interval: s.r.cfg.SampleInterval.Seconds(), Samples: s.series}
	// A figure not sampled at some moment (a probe failed, counted) is 0
	// there, which no live server shows: the trends skip it.
	var rx, ry, gx, gy []float64
	for _, v := range s.series {
		if v.RSS > 0 {
			rx, ry = append(rx, v.At), append(ry, float64(v.RSS))
		}
		if v.Goroutines > 0 {
			gx, gy = append(gx, v.At), append(gy, float64(v.Goroutines))
		}
	}
	if s.rss {
		rs.RSSSource, rs.RSS = s.r.opts.Server.Source(), newTrend(rx, ry)
	}
	if s.gor {
		rs.GoroutineSource, rs.Goroutines = s.r.opts.Metrics.Source()+" go_goroutines", newTrend(gx, gy)
	}
	res.Resources = rs
}
