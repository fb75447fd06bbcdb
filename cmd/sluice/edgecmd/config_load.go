package edgecmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// LoadConfig reads a YAML configuration file over DefaultConfig and
// validates it. Errors name the file, the key path and the line.
func LoadConfig(path string) (*Config, error) {
	c, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ReadConfig is LoadConfig without the validation, for a caller that
// completes the file first: the edge command's flags may set what a
// check needs (--data-dir for a cluster section, --cluster-tls-* for
// routes from other hosts), so it validates the file and flags together.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.dir = filepath.Dir(path)
	c.TLS.resolve(c.dir)
	c.resolveCluster(c.dir)
	return c, nil
}

// parseConfig decodes YAML strictly over DefaultConfig.
func parseConfig(data []byte) (*Config, error) {
	c := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(c)
	if errors.Is(err, io.EOF) {
		return c, nil // empty file: the defaults
	}
	if err != nil {
		return nil, locate(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	return c, nil
}
