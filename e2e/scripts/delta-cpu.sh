#!/usr/bin/env bash
# delta-cpu.sh measures what delta compression (rtm/subscribe delta)
# costs and saves end to end (issue 33 §2): one edge on loopback,
# `sluice bench fanout --payload feed` (2 KiB JSON objects, a few fields
# changing per message, JSON codec), with and without --delta, at 16
# and 200 subscribers, ROUNDS rounds alternating. Per run it prints the
# deliveries in the window and their rate, the edge's CPU per delivery
# and cores used over the window (the bench reads /proc/PID/stat), the
# generator's own, the bytes the edge wrote per delivery over the whole
# run (sluice_server_sent_bytes_total over the deliveries owed), and the
# load average. Every subscriber checks every message byte for byte.
#
#   e2e/scripts/delta-cpu.sh
#
# ROUNDS (default 3), DURATION (default 10s). RATE16 and RATE200 are
# messages a second (default: none, as fast as the bench's window
# allows, to saturate the edge; 100 and 8 make about 1,600 deliveries a
# second). RAW=1 (the default) runs the bench with --raw-subscribers,
# whose check costs the generator a few µs a delivery, RAW=0 through the
# Go client, which decodes every object. The kinds of any errors close
# the line. Needs bin/sluice (make build).
set -euo pipefail
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
source "$(dirname "$0")/lib.sh"
p=$(port)
printf 'limits: {requests_per_second: 1000000, request_burst: 1000000, connections_per_ip: -1}\n' >"$dir/edge.yaml"
start edge --listen "127.0.0.1:$p" --config "$dir/edge.yaml"
sent() { curl -s "http://127.0.0.1:$p/metrics" | awk '/^sluice_server_sent_bytes_total\{/ {s += $NF} END {printf "%.0f", s}'; }
raw=()
[ "${RAW:-1}" = 1 ] && raw=(--raw-subscribers)
echo "edge: $bin edge on 127.0.0.1:$p; bench: fanout --payload feed --codec json --duration $duration ${raw[*]}"
printf '%-5s %-5s %-5s %6s %9s %8s %10s %9s %10s %9s %10s %5s  %s\n' round subs delta rate delivered dlv/s \
	edge_us/dlv edge_cores gen_us/dlv gen_cores bytes/dlv err load
for r in $(seq "$rounds"); do
	for subs in 16 200; do
		rate=${RATE16:-}
		[ "$subs" = 200 ] && rate=${RATE200:-}
		for delta in off on; do
			flags=("${raw[@]}")
			[ "$delta" = on ] && flags+=(--delta)
			[ -n "$rate" ] && flags+=(--rate "$rate")
			s0=$(sent)
			"$bin" bench fanout --url "ws://127.0.0.1:$p" --payload feed --codec json --subscribers "$subs" \
				--duration "$duration" --quiet --json "${flags[@]}" >"$dir/bench.json" 2>"$dir/bench.err" || true
			s1=$(sent)
			jq -r --arg r "$r" --arg d "$delta" --argjson b "$((s1 - s0))" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
				'[$r, .config.subscribers, $d, (.config.rate // 0 | round), .delivered, (.deliver_rate | round),
				  (.server.cpu_per_delivery_us*100|round/100), (.server.cores*100|round/100),
				  (.generator.cpu_per_delivery_us*100|round/100), (.generator.cores*100|round/100),
				  ($b / (if .expected > 0 then .expected else 1 end) | round), (.lost + .error_total), $load,
				  ((.errors // {}) | keys | join(","))] | @tsv' \
				"$dir/bench.json" | awk -F'\t' '{printf "%-5s %-5s %-5s %6s %9s %8s %10s %9s %10s %9s %10s %5s  %s  %s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14}'
		done
	done
done
