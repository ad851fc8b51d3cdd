package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DiscoveryFile is the name, in the data directory, of the file that
// tells local programs where a running server listens.
const DiscoveryFile = "server.json"

// Discovery is the content of the discovery file. It holds no secret:
// clients read the token from its own file.
type Discovery struct {
	URL     string    `json:"url"`
	Port    int       `json:"port"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Version string    `json:"version,omitempty"`
}

// WriteDiscovery writes the discovery file, readable by its owner only.
// It is written whole or not at all (a temporary file renamed).
func WriteDiscovery(dir string, d Discovery) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("discovery file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".server-*.json") // mode 0600
	if err != nil {
		return fmt.Errorf("discovery file: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("discovery file: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, DiscoveryFile)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("discovery file: %w", err)
	}
	return nil
}

// ReadDiscovery reads the discovery file; fs.ErrNotExist when there is
// none.
func ReadDiscovery(dir string) (Discovery, error) {
	var d Discovery
	data, err := os.ReadFile(filepath.Join(dir, DiscoveryFile))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return d, fmt.Errorf("discovery file %s: %w", filepath.Join(dir, DiscoveryFile), err)
	}
	return d, nil
}

// RemoveDiscovery removes the discovery file if it is the one process pid
// wrote (another server may have replaced it since).
func RemoveDiscovery(dir string, pid int) error {
	d, err := ReadDiscovery(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && d.PID != pid {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, DiscoveryFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("discovery file: %w", err)
	}
	return nil
}
