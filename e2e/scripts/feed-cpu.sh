#!/usr/bin/env bash
# feed-cpu.sh measures what each edge of a cluster spends on the feed
# (issue 31): one durable edge serving NATS on loopback (the log) and two
# edges on --nats; sluice bench runs every client on the second edge, and
# the third serves nobody. It prints each edge's CPU seconds (from /proc,
# user + system, over the bench) and RSS before and after.
#
#   e2e/scripts/feed-cpu.sh [all|interest] [bench flags...]
#
# SCENARIO names another bench scenario (default channels). SYNC is the
# log's cluster.sync (default always: an fsync before every
# acknowledgment, which holds this disk below the bench's 2,000 a second
# with one publish in flight per publisher; 1s reaches it).
# Default bench: channels --channels 200 --per-channel 5 --rate 2000
# --codec json --duration 30s. Needs bin/sluice (make build).
set -euo pipefail
feed=${1:-interest}
shift || true
bench=("$@")
if [ ${#bench[@]} -eq 0 ]; then
	bench=(--channels 200 --per-channel 5 --rate 2000 --codec json --duration 30s)
fi
source "$(dirname "$0")/lib.sh"
nats=$(port)
printf 'cluster:\n  client_listen: 127.0.0.1:%s\n  feed: %s\n  sync: %s\n' "$nats" "$feed" "${SYNC:-always}" >"$dir/log.yaml"
start log --listen 127.0.0.1:0 --data-dir "$dir/data" --config "$dir/log.yaml"
served=$(port)
start served --listen "127.0.0.1:$served" --nats "nats://127.0.0.1:$nats" --cluster-feed "$feed" ${SERVED_FLAGS:-}
start idle --listen 127.0.0.1:0 --nats "nats://127.0.0.1:$nats" --cluster-feed "$feed" ${IDLE_FLAGS:-}
names=(log served idle)
declare -A c0 r0
for i in 0 1 2; do
	c0[$i]=$(cpu "${pids[$i]}")
	r0[$i]=$(rss "${pids[$i]}")
done
if [ -n "${PROFILE:-}" ]; then
	# A CPU profile of an edge over the bench: PROFILE is the host:port
	# of its --admin-listen (given in IDLE_FLAGS or SERVED_FLAGS).
	curl -s -o "${PROFILE_OUT:-edge.pprof}" "http://$PROFILE/debug/pprof/profile?seconds=25" &
	prof=$!
fi
"$bin" bench "${SCENARIO:-channels}" --url "ws://127.0.0.1:$served" "${bench[@]}" >"$dir/bench.txt"
[ -z "${prof:-}" ] || wait "$prof"
echo "feed: $feed; bench: sluice bench ${SCENARIO:-channels} ${bench[*]} on the served edge"
grep -iE 'delivered|published' "$dir/bench.txt" | head -4 || true
printf '%-8s %10s %12s %12s\n' edge cpu_s rss_before rss_after
for i in 0 1 2; do
	c1=$(cpu "${pids[$i]}")
	printf '%-8s %10.2f %10s MB %9s MB\n' "${names[$i]}" "$(echo "$c1 - ${c0[$i]}" | bc)" "${r0[$i]}" "$(rss "${pids[$i]}")"
done
