package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// TestPlanJSONScenarios checks that the scenarios of JSON clients with one
// publish in flight are planned so, and that the floor runs with exactly
// the unbatched scenarios.
func TestPlanJSONScenarios(t *testing.T) {
	o, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := plan(o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]spec{}
	for _, sp := range specs {
		got[sp.name] = sp
	}
	for _, name := range []string{fanoutRateJSON, channelsJSON} {
		sp, ok := got[name]
		if !ok {
			t.Fatalf("the default plan lacks %s", name)
		}
		if sp.codec != "json" || sp.cfg.Inflight != 1 || !sp.floor {
			t.Errorf("%s: codec %q, inflight %d, floor %v; want json, 1, true", name, sp.codec, sp.cfg.Inflight, sp.floor)
		}
	}
	if got[fanoutRateJSON].cfg.Rate != o.fanoutRate || got[channelsJSON].cfg.Scenario != loadgen.Channels {
		t.Errorf("JSON scenarios are not the fixed-rate fanout and the channels: %+v %+v", got[fanoutRateJSON].cfg, got[channelsJSON].cfg)
	}
	both := []system{sluiceSystem(), centrifugoSystem()}
	for _, sp := range specs {
		names := ""
		for _, s := range systemsFor(o, sp, both) {
			names += s.name + ","
		}
		want := "sluice,centrifugo,"
		if sp.floor {
			want += "floor,"
		}
		if names != want {
			t.Errorf("%s runs %s, want %s", sp.name, names, want)
		}
		o.floor = false
		if n := len(systemsFor(o, sp, both)); n != 2 {
			t.Errorf("%s with --floor=false runs %d systems", sp.name, n)
		}
		o.floor = true
	}
}

// TestSummaryFloorTable checks the ratios to the floor and the target of
// the JSON fixed-rate fanout.
func TestSummaryFloorTable(t *testing.T) {
	res := func(cpuPerDelivery float64) *loadgen.Result {
		return &loadgen.Result{DeliverRate: 1, Delivered: 1000, Server: &loadgen.ProcStats{PerDelivery: cpuPerDelivery, CPU: 1}}
	}
	for _, tc := range []struct {
		name       string
		sluice     float64
		wantMissed int
		want       string
	}{
		{"within", 11, 0, "10.00µs 11.00µs 15.00µs 1.10x 1.50x sluice <= 1.2x floor PASS"},
		{"past", 13, 1, "10.00µs 13.00µs 15.00µs 1.30x 1.50x sluice <= 1.2x floor FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := []outcome{
				{Scenario: fanoutRateJSON, System: floorName, Result: res(10)},
				{Scenario: fanoutRateJSON, System: "sluice", Result: res(tc.sluice)},
				{Scenario: fanoutRateJSON, System: "centrifugo", Result: res(15)},
				{Scenario: channelsJSON, System: floorName, Result: res(4)},
				{Scenario: channelsJSON, System: "sluice", Result: res(8)},
				{Scenario: channelsJSON, System: "centrifugo", Result: res(6)},
			}
			var out bytes.Buffer
			specs := []spec{{name: fanoutRateJSON, floor: true}, {name: channelsJSON, floor: true}}
			missed := writeFloorTable(&out, specs, all, "sluice", "centrifugo")
			text := out.String()
			if missed != tc.wantMissed || !strings.Contains(row(text, fanoutRateJSON), tc.want) {
				t.Errorf("missed %d, want %d and %q:\n%s", missed, tc.wantMissed, tc.want, text)
			}
			if got := row(text, channelsJSON); got != "4.00µs 8.00µs 6.00µs 2.00x 1.50x" {
				t.Errorf("channels-json row %q:\n%s", got, text)
			}
		})
	}
}

// row returns the fields after the scenario of the table row of
// scenario, joined by single spaces.
func row(text, scenario string) string {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == scenario {
			return strings.Join(f[1:], " ")
		}
	}
	return ""
}
