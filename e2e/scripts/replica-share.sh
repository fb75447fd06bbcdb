#!/usr/bin/env bash
# replica-share.sh splits what an idle edge of the embedded cluster spends
# (issue 31 §1): in a three-node cluster every edge is also a JetStream
# replica and stores every message (the price of R3), which is not the
# edge's own work; the target is for the edge's own share alone.
#
#   e2e/scripts/replica-share.sh [bench channels flags...]
#
# It starts three embedded-cluster edges on loopback (stream R3, feed
# interest, the default in a cluster), each with an admin listener, runs
# sluice bench channels with every client on edge 1 and, over 25 s of the
# bench, takes a CPU profile and an allocation profile of edges 2 and 3
# (which serve nobody), and an execution trace of 5 s of each. It prints each edge's CPU seconds (/proc, user +
# system, over the bench), which node leads the stream, and each idle
# edge's profile split by e2e/scripts/replica-share.py: (a) the replica's
# work, (b) the edge's own, with (b) as % of edge 1's CPU. It stops by
# itself. Default bench: --channels 200 --per-channel 5 --rate 2000
# --codec json --duration 30s. KEEP=DIR keeps the profiles in DIR.
# SLUICE is the binary (default ./bin/sluice; make build).
set -euo pipefail
bench=("$@")
if [ ${#bench[@]} -eq 0 ]; then
	bench=(--channels 200 --per-channel 5 --rate 2000 --codec json --duration 30s)
fi
here=$(dirname "$0")
source "$here/lib.sh"
key=sluice-demo-development-api-key
ports=() admin=() rp=() routes=""
for i in 1 2 3; do
	ports[i]=$(port)
	admin[i]=$(port)
	rp[i]=$(port)
	routes+="${routes:+,}nats-route://127.0.0.1:${rp[i]}"
done
for i in 1 2 3; do
	printf 'log: {level: warn}\n' >"$dir/n$i.yaml"
	spawn "n$i" --config "$dir/n$i.yaml" --listen "127.0.0.1:${ports[i]}" \
		--admin-listen "127.0.0.1:${admin[i]}" --data-dir "$dir/data$i" --node-name "n$i" \
		--cluster-name share --cluster-listen "127.0.0.1:${rp[i]}" --cluster-routes "$routes"
done
for i in 1 2 3; do ready "n$i"; done
leader() {
	curl -sf -H "X-API-Key: $key" -d '{}' "http://127.0.0.1:${ports[1]}/api/info" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["journal"].get("leader") or "?")'
}
lead="?"
for _ in $(seq 300); do
	lead=$(leader) || lead="?"
	[ "$lead" != "?" ] && break
	sleep 0.2
done
profs=()
for i in 2 3; do
	# A GC first: the allocation profile shows what was allocated up to
	# the last GC, so without one the edge's start would count as the
	# window's.
	curl -sf -o /dev/null "http://127.0.0.1:${admin[i]}/debug/pprof/heap?gc=1"
	curl -sf -o "$dir/cpu$i.pprof" "http://127.0.0.1:${admin[i]}/debug/pprof/profile?seconds=25" &
	profs+=($!)
	curl -sf -o "$dir/alloc$i.pprof" "http://127.0.0.1:${admin[i]}/debug/pprof/allocs?seconds=25" &
	profs+=($!)
	# An execution trace of 5 s in the profiles' window: who wakes the
	# scheduler.
	(sleep 12 && curl -sf -o "$dir/trace$i.out" "http://127.0.0.1:${admin[i]}/debug/pprof/trace?seconds=5") &
	profs+=($!)
done
c0=()
for i in 1 2 3; do c0[i]=$(cpu "${pids[i - 1]}"); done
"$bin" bench channels --url "ws://127.0.0.1:${ports[1]}" "${bench[@]}" >"$dir/bench.txt" 2>"$dir/bench.err"
for p in "${profs[@]}"; do wait "$p"; done
c1=()
for i in 1 2 3; do c1[i]=$(echo "$(cpu "${pids[i - 1]}") - ${c0[i]}" | bc); done
echo "sluice bench channels ${bench[*]}, every client on n1; stream leader: $lead; load: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -iE 'delivered|published|lost' "$dir/bench.txt" | head -4 || true
printf '%-4s %8s\n' node cpu_s
for i in 1 2 3; do printf '%-4s %8.2f\n' "n$i" "${c1[i]}"; done
for i in 2 3; do
	role=follower
	[ "$lead" != "n$i" ] || role=leader
	echo "-- n$i ($role), 25 s profile:"
	go tool pprof -traces "$dir/cpu$i.pprof" 2>/dev/null >"$dir/cpu$i.txt"
	go tool pprof -traces -sample_index=alloc_space "$dir/alloc$i.pprof" 2>/dev/null >"$dir/alloc$i.txt"
	go tool trace -d=parsed "$dir/trace$i.out" >"$dir/trace$i.txt" 2>&1
	python3 "$here/replica-share.py" "$dir/cpu$i.txt" "$dir/alloc$i.txt" "$dir/trace$i.txt" "${c1[i]}" "${c1[1]}"
done
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$dir"/*.pprof "$dir"/trace?.out "$dir/bench.txt" "$KEEP/"
fi
