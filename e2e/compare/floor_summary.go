package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// floorTargets are the most CPU per delivery Sluice may spend, as a
// multiple of the floor's, in the scenarios that have a target for it.
var floorTargets = map[string]float64{fanoutRateJSON: 1.2}

// writeFloorTable prints, for the scenarios the floor ran, each system's
// server CPU per delivery and its ratio to the floor's, medians of the
// same run's rounds, and returns how many targets system a missed.
func writeFloorTable(w io.Writer, specs []spec, all []outcome, a, b string) int {
	var ran []spec
	for _, sp := range specs {
		if sp.floor && !math.IsNaN(median(all, sp.name, floorName, cpuPerDelivery)) {
			ran = append(ran, sp)
		}
	}
	if len(ran) == 0 {
		return 0
	}
	fmt.Fprintln(w, "== Server CPU per delivery against the floor (medians over rounds, the floor run in the same rounds)")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tfloor\t%s\t%s\t%s/floor\t%s/floor\ttarget\t\n", a, b, a, b)
	missed := 0
	for _, sp := range ran {
		f := median(all, sp.name, floorName, cpuPerDelivery)
		s, c := median(all, sp.name, a, cpuPerDelivery), median(all, sp.name, b, cpuPerDelivery)
		target := ""
		if n, ok := floorTargets[sp.name]; ok {
			pass := !math.IsNaN(s) && s <= n*f
			target = fmt.Sprintf("%s <= %gx floor  %s", a, n, verdict(pass))
			if !pass {
				missed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", sp.name, show(f, micros), show(s, micros), show(c, micros), ratio(s, f), ratio(c, f), target)
	}
	tw.Flush()
	return missed
}
