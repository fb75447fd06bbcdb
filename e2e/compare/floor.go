package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/wasm/client"
)

// floorSystem runs the floor (./floor): the least a server can do for
// the load generator's RTM clients, whose CPU per delivery the other
// systems' are reported against. Its clients speak the codec Sluice's
// do in the scenario.
func floorSystem() system {
	return system{name: floorName, start: func(ctx context.Context, o *options, _ topology) (*group, loadgen.Driver, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		p, err := startProcess(ctx, o.floorBin, o.workDir, "http://"+addr+"/healthz", "--listen", addr)
		if err != nil {
			return nil, nil, err
		}
		return single(p), &loadgen.RTM{Label: floorName, URL: "ws://" + addr, Options: client.Options{
			AppKey: "demo", Codec: o.sluiceCodec, Logger: quietLogger(),
		}}, nil
	}}
}

// floorName names the floor in results.
const floorName = "floor"

// buildFloor builds the floor from the compare module of the Sluice tree
// at repo into dir.
func buildFloor(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "floor")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./floor")
	cmd.Dir = filepath.Join(repo, "e2e", "compare")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the floor in %s: %w\n%s", cmd.Dir, err, out)
	}
	return bin, nil
}
