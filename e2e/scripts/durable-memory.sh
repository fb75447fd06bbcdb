#!/usr/bin/env bash
# durable-memory.sh measures a durable edge's memory under a steady
# publish rate (issue 31 §3): one durable edge (cluster.sync: 1s, since
# an fsync before every acknowledgment holds one disk to about a
# thousand a second), sluice bench publish at RATE for DURATION, the
# edge's RSS every 10 s and, 10 s before the end, its heap profile
# (top allocations in use) and Go memory figures.
#
#   e2e/scripts/durable-memory.sh [RATE] [DURATION]   (default 20000 5m)
#
# SLUICE is the binary (default ./bin/sluice; make build). EDGE_CONFIG
# adds YAML to the edge's config (e.g. 'limits: {store_bytes: 1GiB}').
set -euo pipefail
rate=${1:-20000}
duration=${2:-5m}
source "$(dirname "$0")/lib.sh"
listen=$(port)
admin=$(port)
cat >"$dir/edge.yaml" <<YAML
listen: 127.0.0.1:$listen
admin: {listen: 127.0.0.1:$admin}
limits: {requests_per_second: 1000000, connections: 100000, connections_per_ip: -1}
log: {level: warn}
cluster: {sync: 1s}
${EDGE_CONFIG:-}
YAML
start edge --config "$dir/edge.yaml" --data-dir "$dir/data"
edge=${pids[-1]}
(while sleep 10; do rss "$edge"; echo; done) >"$dir/rss" &
pids+=($!)
secs=$(python3 -c "import sys,re; m=re.fullmatch(r'(\d+)(s|m)', sys.argv[1]); print(int(m[1])*(60 if m[2]=='m' else 1))" "$duration")
(sleep $((secs - 10)) &&
	curl -s -o "$dir/heap" "http://127.0.0.1:$admin/debug/pprof/heap" &&
	curl -s "http://127.0.0.1:$admin/metrics" >"$dir/metrics") &
pids+=($!)
"$bin" bench publish --url "ws://127.0.0.1:$listen" --publishers 4 --inflight 64 \
	--rate "$rate" --duration "$duration" --quiet --edge-pid "$edge" >"$dir/bench.txt"
echo "durable edge (cluster.sync: 1s${EDGE_CONFIG:+; $EDGE_CONFIG}); sluice bench publish --publishers 4 --inflight 64 --rate $rate --duration $duration"
grep -E 'published|server' "$dir/bench.txt"
echo "RSS every 10 s (MB): $(tr '\n' ' ' <"$dir/rss")"
sort -n "$dir/rss" | tail -1 | sed 's/^/RSS at most (MB): /'
grep -E '^go_memstats_(heap_inuse|next_gc)_bytes' "$dir/metrics" || true
go tool pprof -top -sample_index=inuse_space "$dir/heap" 2>/dev/null | sed -n '4,11p'
