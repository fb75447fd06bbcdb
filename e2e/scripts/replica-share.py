"""replica-share.py: the classification of replica-share.sh (issue 31 §1).

  python3 replica-share.py CPU_TRACES ALLOC_TRACES TRACE EDGE_CPU_S SERVING_CPU_S

CPU_TRACES and ALLOC_TRACES are `go tool pprof -traces` of an idle edge's
CPU profile and of its allocation profile (alloc_space) over the same
window, TRACE `go tool trace -d=parsed` of an execution trace of a few
seconds inside it. Each sample goes to whoever started the goroutine it ran on: the
root-most frame that names a component decides, so the edge's code
calling into nats-server (asking it for stream info, say) is the edge's,
and nats-server's goroutines (its Raft groups, file store, stream and
consumer loops, its routes and the server side of every client
connection) are the replica's:
  (a) replica  github.com/nats-io/nats-server/...
  (b) edge     github.com/sluicehq/sluice/..., github.com/nats-io/nats.go
               (the journal's client), prometheus (metrics), net/http
               other than the profiler
  profiler     runtime/pprof, runtime/trace and their handlers anywhere in
               the stack: the measurement's own, left out of both
  runtime      samples with no such frame: the GC's background workers,
               the scheduler, sysmon, the netpoller
The runtime share is then split between (a) and (b): the GC's part by
each one's share of the bytes allocated over the window (GC work follows
allocation), the rest (the scheduler finding the next goroutine, the
netpoller, timers) by each one's share of the goroutine wake-ups in the
execution trace (each goroutine made runnable from waiting or a
syscall, owned by whoever started it, as above). It prints the split as % of the profile and in
seconds of the edge's CPU over the bench (EDGE_CPU_S from /proc, shared
out by the profile's fractions), and (b) as % of SERVING_CPU_S, with the
bound where every runtime sample is the edge's.
"""

import re
import sys

UNITS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0,
    "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
}
GC = re.compile(r"^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcMarkDone|gcStart|forEachP)")


PROFILER = ("runtime/pprof.", "net/http/pprof.", "runtime/trace.")
EDGE = ("github.com/sluicehq/sluice/", "github.com/nats-io/nats.go", "github.com/nats-io/nats%2ego",
        "github.com/prometheus/", "net/http.")


def owner(frames):
    """Who a stack's CPU belongs to, from its root (the last frame) up."""
    if any(f.startswith(PROFILER) for f in frames):
        return "profiler"
    for f in reversed(frames):
        if f.startswith("github.com/nats-io/nats-server/"):
            return "replica"
        if f.startswith(EDGE):
            return "edge"
    if any(GC.match(f) for f in frames):
        return "gc"
    return "runtime"


def wakeups(path):
    """Goroutines made runnable (from waiting or a syscall), by owner.

    A goroutine's owner comes from any stack the trace shows of it (its
    creation, its state at the trace's start, an event it emitted): the
    root frame is the same in each.
    """
    own, woken, frames, whose, ev_g, tr_g = {}, [], [], None, None, None

    def flush():
        if whose is not None and frames and whose not in own:
            o = owner(frames)
            if o in ("replica", "edge", "profiler"):
                own[whose] = o

    for line in open(path, encoding="utf-8"):
        if line.startswith("\t\t"):  # a frame's file:line
            continue
        if line.startswith("\t"):
            frames.append(line.split()[0])
            continue
        flush()
        frames = []
        if line.startswith("TransitionStack="):
            whose = tr_g  # the stack of the goroutine changing state
            continue
        if line.startswith("Stack="):
            whose = ev_g  # the stack of the goroutine emitting the event
            continue
        whose = None
        m = re.match(r"^M=\S+ P=\S+ G=(-?\d+) ", line)
        if not m:
            continue
        ev_g, tr_g = int(m.group(1)), None
        t = re.search(r"GoID=(\d+) (\w+)->(\w+)", line)
        if t:
            tr_g = int(t.group(1))
            if t.group(3) == "Runnable" and t.group(2) in ("Waiting", "Syscall"):
                woken.append(tr_g)
    flush()
    n = {}
    for g in woken:
        k = own.get(g, "runtime")
        n[k] = n.get(k, 0) + 1
    return n


def samples(path):
    """(value, frames) of each stack of a `pprof -traces` listing."""
    out, value, frames = [], None, []
    for line in open(path, encoding="utf-8"):
        if line.startswith("-----------+"):
            if value is not None:
                out.append((value, frames))
            value, frames = None, []
            continue
        if value is None:
            m = re.match(r"^\s*([0-9.]+)([a-zµA-Z]*)\s+(\S+)", line)
            if m and line[:11].strip():
                value = float(m.group(1)) * UNITS.get(m.group(2), 1)
                frames = [m.group(3)]
            continue
        s = line.strip()
        if not s or re.match(r"^\S+:\s", s):  # a label line
            continue
        frames.append(s.split()[0])
    if value is not None:
        out.append((value, frames))
    return out


def totals(path):
    t = {}
    for v, frames in samples(path):
        k = owner(frames)
        t[k] = t.get(k, 0) + v
    return t


def main():
    cpu, alloc, wake = totals(sys.argv[1]), totals(sys.argv[2]), wakeups(sys.argv[3])
    edge_s, serving_s = float(sys.argv[4]), float(sys.argv[5])
    total = sum(cpu.values()) or 1
    prof = cpu.get("profiler", 0)
    a, b = cpu.get("replica", 0), cpu.get("edge", 0)
    gc, rt = cpu.get("gc", 0), cpu.get("runtime", 0)
    aa, ab = alloc.get("replica", 0), alloc.get("edge", 0)
    wa, wb = wake.get("replica", 0), wake.get("edge", 0)
    gshare = ab / (aa + ab) if aa + ab else 0.5
    rshare = wb / (wa + wb) if wa + wb else 0.5
    b_all = b + gc * gshare + rt * rshare
    a_all = a + gc * (1 - gshare) + rt * (1 - rshare)
    print(f"profile {total:.2f} s of samples: replica {a:.2f}, edge {b:.2f}, GC {gc:.2f}, "
          f"other runtime {rt:.2f}, profiler {prof:.2f}")
    print(f"allocated: replica {aa / 1e6:.1f} MB, edge {ab / 1e6:.1f} MB, so {100 * gshare:.1f}% "
          f"of GC to the edge; wake-ups: replica {wa}, edge {wb}, runtime {wake.get('runtime', 0)}, "
          f"so {100 * rshare:.1f}% of the other runtime")
    for name, v in (("(a) replica", a_all), ("(b) edge", b_all), ("profiler", prof)):
        s = edge_s * v / total
        print(f"{name:12} {100 * v / total:5.1f}% of the profile, {s:5.2f} s of {edge_s:.2f} s, "
              f"{100 * s / serving_s:5.2f}% of n1's {serving_s:.2f} s")
    ub = edge_s * (b + gc + rt) / total
    print(f"(b) if every runtime sample were the edge's: {ub:.2f} s, {100 * ub / serving_s:.2f}% of n1's")


if __name__ == "__main__":
    main()
