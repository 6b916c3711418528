// Package repoconfig keeps the package repositories kubectl-kudo knows, in
// $KUDO_HOME/repository/repositories.yaml (default ~/.kudo), as KUDO did.
package repoconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Repository is a named repository URL.
type Repository struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Config is the file: the repositories and the one in use.
type Config struct {
	Context      string       `json:"context,omitempty"`
	Repositories []Repository `json:"repositories,omitempty"`
}

// Community is KUDO's community repository, the one in use where no
// configuration says otherwise, as in KUDO's CLI.
var Community = Repository{Name: "community", URL: "https://kudo-repository.storage.googleapis.com/v1"}

// Default is the configuration KUDO's CLI had without a file, and its init
// wrote: the community repository, in use.
func Default() *Config {
	return &Config{Context: Community.Name, Repositories: []Repository{Community}}
}

// Path is where the configuration lives.
func Path() (string, error) {
	home := os.Getenv("KUDO_HOME")
	if home == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = filepath.Join(userHome, ".kudo")
	}
	return filepath.Join(home, "repository", "repositories.yaml"), nil
}

// Load reads the configuration; a missing file is the Default one.
func Load() (*Config, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Save writes the configuration.
func (c *Config) Save() error {
	path, err := Path()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// URL resolves a --repo value: a URL as it is, a repository's name to its
// URL, and nothing to the repository in use, if any.
func (c *Config) URL(repo string) (string, error) {
	if strings.Contains(repo, "://") {
		return repo, nil
	}
	name := repo
	if name == "" {
		name = c.Context
	}
	if name == "" {
		return "", nil
	}
	for _, r := range c.Repositories {
		if r.Name == name {
			return r.URL, nil
		}
	}
	return "", fmt.Errorf("repository %q is not configured: add it with kubectl kudo repo add %s URL", name, name)
}

// Resolve is URL on the configuration file.
func Resolve(repo string) (string, error) {
	c, err := Load()
	if err != nil {
		return "", err
	}
	return c.URL(repo)
}
