package main

import (
	"fmt"
	"io"
	"math"
)

// floorTargets are the most CPU per delivery Sluice may spend, as a
// multiple of the floor's, in the scenarios that have a target for it.
var floorTargets = map[string]float64{fanoutRateJSON: 1.2}

// floorTitle is the title of the floor's table.
const floorTitle = "Server CPU per delivery against the floor (medians over rounds, the floor run in the same rounds)"

// writeFloorTable prints the floor's table, if the floor ran, and
// returns how many targets system a missed.
func writeFloorTable(w io.Writer, specs []spec, all []outcome, a, b string) int {
	t, missed := floorTable(specs, all, a, b)
	if len(t.rows) > 0 {
		t.writeText(w)
	}
	return missed
}

// floorTable is, for the scenarios the floor ran, each system's server
// CPU per delivery and its ratio to the floor's, medians of the same
// run's rounds, and how many targets system a missed. It has no rows
// when the floor ran in none of them.
func floorTable(specs []spec, all []outcome, a, b string) (table, int) {
	t := table{title: floorTitle, header: []string{"scenario", "floor", a, b, a + "/floor", b + "/floor", "target"}}
	missed := 0
	for _, sp := range specs {
		f := median(all, sp.name, floorName, cpuPerDelivery)
		if !sp.floor || math.IsNaN(f) {
			continue
		}
		s, c := median(all, sp.name, a, cpuPerDelivery), median(all, sp.name, b, cpuPerDelivery)
		target := ""
		if n, ok := floorTargets[sp.name]; ok {
			pass := !math.IsNaN(s) && s <= n*f
			target = fmt.Sprintf("%s <= %gx floor  %s", a, n, verdict(pass))
			if !pass {
				missed++
			}
		}
		t.rows = append(t.rows, []string{sp.name, show(f, micros), show(s, micros), show(c, micros), ratio(s, f), ratio(c, f), target})
	}
	return t, missed
}
