package view_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used. The benchmarks report
// it per op beside ns/op because this project's machines are shared: on
// a loaded one, wall time counts the time other processes had the CPU.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// benchMsg is a typical small message: a dozen fields, one nested.
var benchMsg = M{
	"who": "zebra", "id": int64(123456), "speed": 42.5, "alive": true,
	"name": "Marty the zebra", "zone": "savanna-north", "tags": []any{"a", "b", "c"},
	"pos": M{"lat": 1.2921, "lon": 36.8219}, "seen": int64(1_700_000_000), "herd": int64(17),
	"note": "grazing near the river", "age": int64(7),
}

// where3 is the benchmark target: a three-condition WHERE.
const where3 = "SELECT * FROM `animals` WHERE who = 'zebra' AND speed > 10 AND pos.lat BETWEEN 0 AND 5"

// BenchmarkWhere3 is the figure: a three-condition WHERE on one
// message, through the View (its Evaluator pool), which must stay at
// 0 allocs/op and 200 ns or less.
func BenchmarkWhere3(b *testing.B) {
	v := compile(b, where3)
	m := enc(b, benchMsg)
	b.ReportAllocs()
	b.SetBytes(int64(len(m)))
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if !v.Match(m) {
			b.Fatal("dropped")
		}
	}
}

// BenchmarkWhere3Small is BenchmarkWhere3 on a message the size of
// those of Satori's examples: three fields, 50 bytes.
func BenchmarkWhere3Small(b *testing.B) {
	v := compile(b, where3)
	m := enc(b, M{"who": "zebra", "speed": 42.5, "pos": M{"lat": 1.2921, "lon": 36.8219}})
	b.ReportAllocs()
	b.SetBytes(int64(len(m)))
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if !v.Match(m) {
			b.Fatal("dropped")
		}
	}
}

// BenchmarkWhere3Evaluator is the same with an Evaluator of its own, as
// a caller evaluating from one goroutine may keep one.
func BenchmarkWhere3Evaluator(b *testing.B) {
	e := compile(b, where3).NewEvaluator()
	m := enc(b, benchMsg)
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if !e.Match(m) {
			b.Fatal("dropped")
		}
	}
}

// BenchmarkWhere3Parallel evaluates one view from every P at once, as the
// edge's senders may.
func BenchmarkWhere3Parallel(b *testing.B) {
	v := compile(b, where3)
	m := enc(b, benchMsg)
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !v.Match(m) {
				b.Error("dropped")
				return
			}
		}
	})
}

// BenchmarkProject projects three fields, one computed, into a reused
// buffer.
func BenchmarkProject(b *testing.B) {
	v := compile(b, "SELECT who, upper(zone) AS zone, speed * 2 AS fast FROM animals WHERE name LIKE '%zebra%'")
	m := enc(b, benchMsg)
	var buf []byte
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		var ok bool
		if buf, ok = v.Append(buf[:0], m); !ok {
			b.Fatal("dropped")
		}
	}
}

// BenchmarkAggregateAdd adds a message to a grouped aggregate whose
// group exists: the steady state of a period.
func BenchmarkAggregateAdd(b *testing.B) {
	a := compile(b, "SELECT who, count(*) AS n, avg(speed) AS s, max(age) AS a FROM animals GROUP BY who").NewAggregate()
	m := enc(b, benchMsg)
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if !a.Add(m) {
			b.Fatal("not counted")
		}
	}
}

// BenchmarkCompile is the cost of one subscription with a new statement.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		compile(b, where3)
	}
}
