package main

// The edge's flags from the environment: what a container platform
// passes most easily (compose's environment:, a Kubernetes env list, a
// PaaS's settings) with the same names as the flags.

import (
	"flag"
	"fmt"
	"strings"
)

// envPrefix begins the name of every edge flag's environment variable.
const envPrefix = "SLUICE_"

// notFromEnv are the flags that no variable sets: --check-config asks for
// a one-off report and exit, which an environment set for a service
// would turn on for every start; --strict qualifies --check-config
// alone, so from a service's environment it would refuse every start.
var notFromEnv = map[string]bool{"check-config": true, "strict": true}

// flagEnv names flag's variable: SLUICE_ and the flag in capitals, each
// '-' an '_' (--data-dir: SLUICE_DATA_DIR).
func flagEnv(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// setFromEnv sets each flag of fs that the command line did not from its
// variable, when lookup finds one: the command line wins over the
// environment, which wins over the configuration file (the flags are
// written over it). A repeatable flag (--domain) takes a
// comma-separated list.
func setFromEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] || notFromEnv[f.Name] {
			return
		}
		v, ok := lookup(flagEnv(f.Name))
		if !ok || v == "" {
			return
		}
		values := []string{v}
		if f.Name == "domain" {
			values = splitList(v)
		}
		for _, v := range values {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%w: %s=%q: %v", errUsage, flagEnv(f.Name), v, e)
				return
			}
		}
	})
	return err
}
