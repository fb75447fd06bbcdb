# lib.sh: what the measuring scripts here share; source it. It sets bin
# (SLUICE, default ./bin/sluice), dir (a temporary directory) and pids
# (processes to kill), removes and kills them on exit, and defines port
# (a free loopback port).
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
