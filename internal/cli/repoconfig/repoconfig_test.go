package repoconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestARepoValueResolvesAsKUDOResolvedIt: a URL is itself, a name is its
// repository's URL, nothing is the repository in use, and an unknown name
// says how to add it.
func TestARepoValueResolvesAsKUDOResolvedIt(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	c := &Config{Context: "local", Repositories: []Repository{
		Community,
		{Name: "local", URL: "http://localhost:8080"},
	}}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	for repo, want := range map[string]string{
		"":                          "http://localhost:8080",
		"community":                 "https://kudo-repository.storage.googleapis.com/v1",
		"file:///srv/repo":          "file:///srv/repo",
		"https://example.com/repo/": "https://example.com/repo/",
		"missing":                   `repository "missing" is not configured: add it with kubectl kudo repo add missing URL`,
	} {
		got, err := Resolve(repo)
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("Resolve(%q) = %q, want %q", repo, got, want)
		}
	}
}

// TestWithoutAConfigurationTheCommunityRepositoryIsInUse: as in KUDO's
// CLI, where no file configures the repositories, the community one is in
// use.
func TestWithoutAConfigurationTheCommunityRepositoryIsInUse(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	if got, err := Resolve(""); err != nil || got != "https://kudo-repository.storage.googleapis.com/v1" {
		t.Fatalf("Resolve(\"\") with no configuration = %q, %v; want the community repository", got, err)
	}
}

// TestAConfigurationKUDOCannotReadIsRefusedNamingItsFile: a misspelt
// field is an error, not a configuration silently emptied.
func TestAConfigurationKUDOCannotReadIsRefusedNamingItsFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("KUDO_HOME", home)
	path := filepath.Join(home, "repository", "repositories.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("context: community\nrepositorys: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load()
	if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "repositorys") {
		t.Fatalf("Load = %v, want an error naming %s and the unknown field", err, path)
	}
}
