package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TrustFile is the file, in the data directory, that remembers the
// projects the user trusted.
const TrustFile = "trusted-projects.json"

// TrustStore remembers which projects the user trusted: a project
// directory with the hash of its server definitions (Servers.ProjectHash),
// so that a changed .mcp.json is asked about again.
type TrustStore struct {
	path string
}

// NewTrustStore returns the store in the data directory.
func NewTrustStore(dataDir string) *TrustStore {
	return &TrustStore{path: filepath.Join(dataDir, TrustFile)}
}

type trustDoc struct {
	// Projects maps a directory to the answer given for its definitions.
	Projects map[string]answer `json:"projects"`
}

type answer struct {
	// Hash identifies the definitions the answer is about.
	Hash    string `json:"hash"`
	Trusted bool   `json:"trusted"`
}

func (t *TrustStore) read() (trustDoc, error) {
	doc := trustDoc{Projects: map[string]answer{}}
	data, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("read trusted projects: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return trustDoc{Projects: map[string]answer{}}, fmt.Errorf("%s: not valid JSON: %w", t.path, err)
	}
	if doc.Projects == nil {
		doc.Projects = map[string]answer{}
	}
	return doc, nil
}

// Answer returns the user's answer about this content of the project:
// asked reports whether there is one.
func (t *TrustStore) Answer(dir, hash string) (trusted, asked bool, err error) {
	doc, err := t.read()
	if err != nil {
		return false, false, err
	}
	got, ok := doc.Projects[filepath.Clean(dir)]
	if !ok || got.Hash != hash {
		return false, false, nil
	}
	return got.Trusted, true, nil
}

// Trusted reports whether the user trusted this content of the project.
func (t *TrustStore) Trusted(dir, hash string) (bool, error) {
	trusted, _, err := t.Answer(dir, hash)
	return trusted, err
}

// Remember records the user's answer about this content of the project.
// The file is replaced whole (written aside, then renamed), so a crash
// leaves the old or the new one.
func (t *TrustStore) Remember(dir, hash string, trusted bool) error {
	doc, err := t.read()
	if err != nil {
		return err
	}
	doc.Projects[filepath.Clean(dir)] = answer{Hash: hash, Trusted: trusted}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("remember trusted project: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), TrustFile+".*")
	if err != nil {
		return fmt.Errorf("remember trusted project: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("remember trusted project: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("remember trusted project: %w", err)
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("remember trusted project: %w", err)
	}
	return nil
}
