package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/superagents/superagents/internal/tools"
)

// A workspace's .superagents/config.toml comes with the code: a cloned
// repository can ship one, and a command an agent runs can write one. So
// the project file is not trusted with secrets or permissions:
//
//   - where requests, keys and data go ([providers.*] but stream_usage, a
//     model of a provider the file defines itself, database.url) is taken
//     from it only when the user trusts the project (trusted_projects in
//     the user's file, or Options.TrustProject), as for its MCP servers;
//   - its [permissions] can only narrow the user's (tools.Policy.Narrowing),
//     trusted or not, as its [sandbox] can only be stricter (noteSandbox).
//
//   - what tasks may spend (tasks.max_cost, max_tokens, spawn_depth,
//     concurrency, timeout, limits.max_steps) an untrusted project may
//     lower, never raise, and its model prices are ignored: a price
//     lowered, or a model made free, would let a budget pass
//     (narrowCosts).
//
// What it may not set is ignored with a warning; the rest (a model of a
// known provider, other limits and task settings, fork, compaction, a
// model's context window, mcp) it sets freely.

// projectFile is what Load knows of the project file it merges.
type projectFile struct {
	dir     string // the workspace
	trusted bool
}

// freeProviderKey is the one provider key that sends nothing anywhere,
// which an untrusted project may set on a provider it did not define.
const freeProviderKey = "stream_usage"

// ignoreUntrusted puts back, from user, what an untrusted project's file
// f may not choose, and warns of the settings it ignores.
func (c *Config) ignoreUntrusted(f *File, user Config, workspace string) {
	var ignored []string
	own := make(map[string]bool) // providers the project defined
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		before, ok := user.Providers[name]
		if !ok {
			delete(c.Providers, name)
			own[name] = true
			ignored = append(ignored, "providers."+name)
			continue
		}
		before.StreamUsage = c.Providers[name].StreamUsage
		c.Providers[name] = before
		for _, key := range f.keysUnder("providers." + name) {
			if key != "providers."+name+"."+freeProviderKey {
				ignored = append(ignored, key)
			}
		}
	}
	if provider, _, err := ParseModel(c.Model); f.Has("model") && err == nil && own[provider] {
		c.Model, c.ModelOrigin = user.Model, user.ModelOrigin
		ignored = append(ignored, "model")
	}
	c.Database = user.Database
	ignored = append(ignored, f.keysUnder("database")...)
	if len(ignored) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"%s: ignored %s: a project's configuration file may choose where requests, keys and data go only in a project you trust: use --trust-project, or add %q to trusted_projects in your own configuration file",
			f.Path, f.listKeys(ignored), workspace))
	}
	if raised := c.narrowCosts(f, user); len(raised) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"%s: ignored %s: a project's configuration file may lower what tasks may spend, and set model prices, only in a project you trust: use --trust-project, or add %q to trusted_projects in your own configuration file",
			f.Path, f.listKeys(raised), workspace))
	}
}

// narrowCosts puts back, from user, the spending limits an untrusted
// project's file f raised and the model prices it set, and returns their
// keys.
func (c *Config) narrowCosts(f *File, user Config) []string {
	var raised []string
	raise := func(key string) { raised = append(raised, key) }
	lower(f, "tasks.max_cost", &c.Tasks.MaxCost, user.Tasks.MaxCost, true, raise)
	lower(f, "tasks.max_tokens", &c.Tasks.MaxTokens, user.Tasks.MaxTokens, true, raise)
	lower(f, "tasks.spawn_depth", &c.Tasks.SpawnDepth, user.Tasks.SpawnDepth, false, raise)
	lower(f, "tasks.concurrency", &c.Tasks.Concurrency, user.Tasks.Concurrency, false, raise)
	lower(f, "tasks.timeout", &c.Tasks.Timeout.Duration, user.Tasks.Timeout.Duration, false, raise)
	lower(f, "limits.max_steps", &c.Limits.MaxSteps, user.Limits.MaxSteps, false, raise)
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		m, was := c.Models[name], user.Models[name]
		var keys []string
		for _, key := range []string{"input", "output", "cache_read", "cache_write", "free"} {
			if f.Has("models." + name + "." + key) {
				keys = append(keys, "models."+name+"."+key)
			}
		}
		if len(keys) == 0 {
			continue
		}
		m.Input, m.Output, m.CacheRead, m.CacheWrite, m.Free = was.Input, was.Output, was.CacheRead, was.CacheWrite, was.Free
		c.Models[name] = m
		raised = append(raised, keys...)
	}
	return raised
}

// narrowPermissions makes the project's [permissions], which c holds
// after decoding f, narrow the user's, and warns of settings that would
// have loosened them.
func (c *Config) narrowPermissions(f *File, user tools.Policy) error {
	project := c.Permissions
	c.Permissions = user
	if f.Line("permissions") == 0 {
		return nil
	}
	// Checked here, the error points at this file, not the user's.
	if err := project.Validate(); err != nil {
		return f.Errorf("permissions", "%v", err)
	}
	c.Permissions.Narrowing = &project
	var loose []string
	check := func(key string, own, users tools.Rules) {
		if f.Has(key+".read_only") && !own.ReadOnly && users.ReadOnly {
			loose = append(loose, key+".read_only")
		}
		if own.Bash.Asks() && !users.Bash.Asks() {
			loose = append(loose, key+".bash.unlisted")
		}
	}
	check("permissions", project.Rules, user.Rules)
	for _, name := range slices.Sorted(maps.Keys(project.Agents)) {
		check("permissions.agents."+name, project.Agents[name], user.ForAgent(name))
	}
	if len(loose) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"%s: ignored %s: a project's configuration file may tighten permissions, never loosen them: set them in your own configuration file",
			f.Path, f.listKeys(loose)))
	}
	return nil
}

// lower puts back the user's value of a limit the file set higher, or,
// where 0 is no limit (zeroIsNone), set to 0 in place of the user's
// limit, and calls raised with its key.
func lower[T int | int64 | float64 | time.Duration](f *File, key string, project *T, users T, zeroIsNone bool, raised func(string)) {
	if !f.Has(key) {
		return
	}
	higher := *project > users
	if zeroIsNone {
		higher = users != 0 && (*project == 0 || *project > users)
	}
	if higher {
		*project = users
		raised(key)
	}
}

// keysUnder returns the keys the file sets under prefix, sorted.
func (f *File) keysUnder(prefix string) []string {
	var keys []string
	for k := range f.lines {
		if strings.HasPrefix(k, prefix+".") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// listKeys writes keys with their lines, in the order of the file:
// "model (line 1), providers.work (line 3)".
func (f *File) listKeys(keys []string) string {
	keys = slices.Clone(keys)
	slices.SortStableFunc(keys, func(a, b string) int { return f.Line(a) - f.Line(b) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " (line " + strconv.Itoa(f.Line(k)) + ")"
	}
	return strings.Join(parts, ", ")
}
