#!/usr/bin/env bash
# capacity.sh measures the inputs of the capacity model (docs/capacity.md,
# issue 31 §2) on loopback; every run stops by itself.
#
#   e2e/scripts/capacity.sh leader K SYNC [bench publish flags...]
#     three embedded-cluster edges (stream R3) with --cluster-partitions
#     K and cluster.sync SYNC (always, 1s, ...); once every partition's
#     leader is where the journal spreads it, sluice bench publish on
#     edge 2 (default --publishers 4 --inflight 64 --duration 15s). It
#     prints the messages the streams took (their last sequences, summed,
#     before and after), each node's CPU seconds (/proc, user + system)
#     and µs per message, and which partitions each node leads.
#
#   e2e/scripts/capacity.sh feed [bench channels flags...]
#     one durable edge serving NATS on loopback (cluster.sync: 1s, the
#     log) and two edges on --nats with cluster.feed: interest; sluice
#     bench channels publishes on edge A and round-robins its subscribers
#     over A and B, so B follows every other channel and serves its
#     subscribers only. It prints B's CPU seconds, the messages it
#     applied (its deliveries / --per-channel) and its deliveries.
#     Default bench: --channels 200 --per-channel 1 --rate 2000 --codec
#     json --duration 20s. B_FLAGS adds flags to B; with PROFILE, the
#     host:port of B's --admin-listen, a CPU profile of B over 15 s of the
#     bench goes to PROFILE_OUT (default b.pprof).
#
#   e2e/scripts/capacity.sh idle SUBSCRIBERS CHANNELS
#     the same three processes; sluice bench idle holds SUBSCRIBERS
#     connections on edge B, spread over CHANNELS channels, for 30 s. It
#     prints B's RSS before and after the ramp (per connection) and its
#     CPU seconds over the hold alone.
#
# SLUICE is the binary (default ./bin/sluice; make build).
set -euo pipefail
mode=${1:?usage: capacity.sh leader K SYNC | feed | idle SUBSCRIBERS CHANNELS}
shift
source "$(dirname "$0")/lib.sh"
key=sluice-demo-development-api-key
info() { curl -sf -H "X-API-Key: $key" -d '{}' "http://127.0.0.1:$1/api/info"; }
limits='limits: {requests_per_second: 1000000, connections: 100000, connections_per_ip: -1}'

leader() {
	local k=$1 sync=$2
	shift 2
	local bench=("$@")
	[ ${#bench[@]} -gt 0 ] || bench=(--publishers 4 --inflight 64 --duration 15s)
	local ports=() rp=() routes=""
	for i in 1 2 3; do
		ports[i]=$(port)
		rp[i]=$(port)
		routes+="${routes:+,}nats-route://127.0.0.1:${rp[i]}"
	done
	for i in 1 2 3; do
		printf '%s\nlog: {level: info}\ncluster: {sync: %s}\n' "$limits" "$sync" >"$dir/n$i.yaml"
		spawn "n$i" --config "$dir/n$i.yaml" --listen "127.0.0.1:${ports[i]}" \
			--data-dir "$dir/data$i" --node-name "n$i" --cluster-name cap --cluster-listen "127.0.0.1:${rp[i]}" \
			--cluster-routes "$routes" --cluster-partitions "$k"
	done
	for i in 1 2 3; do ready "n$i"; done
	# With K > 1, partition p's preferred leader is the p-th node in name
	# order (mod 3), which the journal of that node claims 2 s after it
	# starts; one stream's leader is whichever node JetStream elected.
	local want="" got=""
	for ((p = 0; p < k; p++)); do want+="n$((p % 3 + 1)) "; done
	for _ in $(seq 300); do
		got=$(info "${ports[1]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(p.get("leader") or "?" for p in (d.get("partitions") or [d["journal"]])) + " ")') || got="? "
		[ "$got" = "$want" ] && break
		[ "$k" = 1 ] && [ "$got" != "? " ] && want=$got && break
		sleep 0.2
	done
	[ "$got" = "$want" ] || { echo "leaders $got, want $want" >&2; exit 1; }
	# The publishers go to a node that leads no partition at K=1 (so the
	# leader's CPU is the stream's alone), else to n2.
	local pub=2
	[ "$k" = 1 ] && [ "$want" = "n2 " ] && pub=3
	seqs() { info "${ports[1]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["last_seq"] for p in (d.get("partitions") or [d["journal"]])))'; }
	local s0 c0=()
	s0=$(seqs)
	for i in 1 2 3; do c0[i]=$(cpu "${pids[i - 1]}"); done
	"$bin" bench publish --url "ws://127.0.0.1:${ports[pub]}" --quiet "${bench[@]}" >"$dir/bench.txt"
	local n=$(($(seqs) - s0))
	echo "K=$k sync=$sync; sluice bench publish ${bench[*]} on n$pub; leaders by partition: $want; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	grep -E 'published|generator' "$dir/bench.txt" || true
	echo "messages the streams took over the bench: $n"
	grep -h "leads its partition" "$dir"/n?.out | cut -c1-160 || true
	printf '%-4s %8s %12s %s\n' node cpu_s us_per_msg leads
	for i in 1 2 3; do
		local c leads=0 l
		c=$(echo "$(cpu "${pids[i - 1]}") - ${c0[i]}" | bc)
		for l in $want; do [ "$l" != "n$i" ] || leads=$((leads + 1)); done
		printf '%-4s %8.2f %12.1f %s\n' "n$i" "$c" "$(echo "$c * 1000000 / $n" | bc -l)" "$leads"
	done
}

# edges starts the log edge and edges A and B on --nats; it sets a and b
# (their ports) and apid and bpid.
edges() {
	local nats
	nats=$(port)
	printf '%s\ncluster: {client_listen: "127.0.0.1:%s", feed: interest, sync: 1s}\n' "$limits" "$nats" >"$dir/log.yaml"
	printf '%s\nlog: {level: warn}\ncluster: {feed: interest}\n' "$limits" >"$dir/edge.yaml"
	start log --listen 127.0.0.1:0 --data-dir "$dir/data" --config "$dir/log.yaml"
	a=$(port)
	start a --listen "127.0.0.1:$a" --nats "nats://127.0.0.1:$nats" --config "$dir/edge.yaml"
	b=$(port)
	start b --listen "127.0.0.1:$b" --nats "nats://127.0.0.1:$nats" --config "$dir/edge.yaml" ${B_FLAGS:-}
	apid=${pids[1]} bpid=${pids[2]}
}

feed() {
	local bench=("$@")
	[ ${#bench[@]} -gt 0 ] || bench=(--channels 200 --per-channel 1 --rate 2000 --codec json --duration 20s)
	edges
	local c0 r0
	c0=$(cpu "$bpid")
	r0=$(rss "$bpid")
	if [ -n "${PROFILE:-}" ]; then
		# A CPU profile of edge B over the bench: PROFILE is the host:port
		# of its --admin-listen, given in B_FLAGS.
		curl -s -o "${PROFILE_OUT:-b.pprof}" "http://$PROFILE/debug/pprof/profile?seconds=15" &
		prof=$!
	fi
	"$bin" bench channels --url "ws://127.0.0.1:$a" --url "ws://127.0.0.1:$b" --quiet --json "${bench[@]}" >"$dir/bench.json"
	[ -z "${prof:-}" ] || wait "$prof"
	local c1
	c1=$(echo "$(cpu "$bpid") - $c0" | bc)
	echo "sluice bench channels ${bench[*]}, publishers on A, subscribers on A and B; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$dir/bench.json" "$c1" "$r0" "$(rss "$bpid")" "$b" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu, r0, r1, port = float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
per = r["config"].get("per_channel") or (r["config"]["subscribers"] // max(r["config"]["channels"], 1))
node = next(n for n in r["nodes"] if n["name"].endswith(":" + port))
owed = node["expected"]
print(f"published {r['published']} ({r['publish_rate']:.0f}/s in the window), lost {r['lost']}, duplicated {r['duplicates']}, reordered {r['reordered']}")
print(f"edge B: {node['subscribers']} subscribers, {owed} deliveries owed over the run, {owed // per} messages applied")
print(f"edge B: cpu {cpu:.2f} s, {cpu * 1e6 / owed:.1f} us per delivery, {cpu * 1e6 / (owed / per):.1f} us per message applied; RSS {r0} -> {r1} MB")
PY
}

idle() {
	local subs=$1 chans=$2
	edges
	"$bin" bench idle --url "ws://127.0.0.1:$b" --subscribers "$subs" --channels "$chans" --duration 30s \
		--quiet --json --edge-pid "$bpid" >"$dir/bench.json"
	echo "sluice bench idle --subscribers $subs --channels $chans --duration 30s on edge B; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$dir/bench.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["server"]
print(f"edge B: RSS {s['rss_before'] / 2**20:.1f} -> {s['rss'] / 2**20:.1f} MiB "
      f"({s['rss_per_connection'] / 1000:.1f} kB per connection); CPU over the hold {s['cpu_s']:.2f} s "
      f"({s['cores'] * 1000:.1f} ms a second), over the ramp {s['connect_cpu_s']:.2f} s")
PY
}

case $mode in
leader) leader "$@" ;;
feed) feed "$@" ;;
idle) idle "$@" ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
