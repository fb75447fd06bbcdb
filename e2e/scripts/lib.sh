# lib.sh: what the measuring scripts here share; source it. It sets bin
# (SLUICE, default ./bin/sluice), dir (a temporary directory) and pids
# (processes to kill), removes and kills them on exit, and defines port
# (a free loopback port), spawn, ready and start (an edge, waited for
# until ready), cpu and rss (a process's CPU seconds and resident MB).
bin=${SLUICE:-./bin/sluice}
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
spawn() { # name args...: an edge in the background, its pid appended to pids
	local name=$1
	shift
	"$bin" edge --ready-file "$dir/$name.ready" "$@" >"$dir/$name.out" 2>&1 &
	pids+=($!)
}
ready() { # name: waits until the edge spawned as name is ready
	for _ in $(seq 900); do
		[ -s "$dir/$1.ready" ] && return
		sleep 0.1
	done
	echo "edge $1 did not get ready:" >&2
	cat "$dir/$1.out" >&2
	exit 1
}
start() { # name args...: an edge, waited for until ready (a cluster's
	# nodes wait for each other: spawn them all, then ready each)
	spawn "$@"
	ready "$1"
}
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$1/stat"; }
rss() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
