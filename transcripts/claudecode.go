package transcripts

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sa "github.com/superagents/superagents"
)

// Claude Code writes one JSONL file per session at
// <config>/projects/<cwd with every non-alphanumeric character replaced by
// '-'>/<session uuid>.jsonl, where <config> is $CLAUDE_CONFIG_DIR or
// ~/.claude. Each line is one record: conversation records (user,
// assistant, system) carry uuid and parentUuid and form a tree; the
// conversation is the chain from the newest record back to the root, where
// a compact_boundary record continues through its logicalParentUuid (or,
// when that record is not in the file, the record written before it), and
// the messages a compaction preserved follow its summary again.

type ccLine struct {
	Type              string     `json:"type"`
	Subtype           string     `json:"subtype"`
	UUID              string     `json:"uuid"`
	ParentUUID        *string    `json:"parentUuid"`
	LogicalParentUUID string     `json:"logicalParentUuid"`
	IsSidechain       bool       `json:"isSidechain"`
	IsMeta            bool       `json:"isMeta"`
	IsCompactSummary  bool       `json:"isCompactSummary"`
	SessionID         string     `json:"sessionId"`
	LeafUUID          string     `json:"leafUuid"`
	MessageID         string     `json:"messageId"`
	Cwd               string     `json:"cwd"`
	Message           *ccMessage `json:"message"`
	CompactMetadata   *ccCompact `json:"compactMetadata"`
}

type ccMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// claudeConfigDir is $CLAUDE_CONFIG_DIR, or ~/.claude.
func claudeConfigDir(env Env) (string, error) {
	if d := env.get("CLAUDE_CONFIG_DIR"); d != "" {
		return d, nil
	}
	home, err := env.home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude"), nil
}

// ClaudeProjectDir is the name Claude Code gives a working directory's
// folder under projects/: every character that is not an ASCII letter or
// digit becomes '-'.
func ClaudeProjectDir(cwd string) string {
	// Claude Code replaces per UTF-16 code unit (a JavaScript regular
	// expression): a character beyond the BMP becomes two dashes.
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func findClaude(env Env, dir string) ([]Transcript, error) {
	root, err := claudeConfigDir(env)
	if err != nil {
		return nil, err
	}
	found, err := claudeFiles(filepath.Join(root, "projects", ClaudeProjectDir(dir), "*.jsonl"), dir)
	if err != nil || len(found) > 0 {
		return found, err
	}
	// Claude Code shortens the folder names of long paths; its records
	// still name the working directory (cwd), so look there.
	all, err := claudeFiles(filepath.Join(root, "projects", "*", "*.jsonl"), dir)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if cwd, ok := claudeCwd(t.Path); ok && filepath.Clean(cwd) == dir {
			found = append(found, t)
		}
	}
	return found, nil
}

// claudeCwd returns the working directory the first records of a
// transcript name.
func claudeCwd(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for i := 0; i < 50 && sc.Scan(); i++ {
		var rec struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Cwd != "" {
			return rec.Cwd, true
		}
	}
	return "", false
}

func lookupClaude(env Env, id string) ([]Transcript, error) {
	root, err := claudeConfigDir(env)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(id, `/\*?[`) {
		return nil, fmt.Errorf("%w: %q is not a Claude Code session id", sa.ErrInvalid, id)
	}
	return claudeFiles(filepath.Join(root, "projects", "*", id+".jsonl"), "")
}

func claudeFiles(pattern, dir string) ([]Transcript, error) {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("find Claude Code transcripts: %w", err)
	}
	var out []Transcript
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, Transcript{Host: ClaudeCode, Path: p, SessionID: strings.TrimSuffix(filepath.Base(p), ".jsonl"), Dir: dir, Updated: fi.ModTime()})
	}
	return out, nil
}

func readClaude(t Transcript, from Position) (Result, error) {
	lines, err := readLines(t.Path, from)
	if err != nil {
		return Result{}, err
	}
	var (
		mal        Malformed
		recognised bool
		parsed     int
		leaf       *ccRecord
	)
	r := &ccReader{path: t.Path, from: from, byUUID: map[string]*ccRecord{}}
	for _, l := range lines {
		rec := &ccRecord{}
		if err := json.Unmarshal(l.data, &rec.ccLine); err != nil {
			mal.add(l.no)
			continue
		}
		parsed++
		if rec.Type == "" {
			mal.add(l.no)
			continue
		}
		if rec.UUID != "" || rec.SessionID != "" || rec.LeafUUID != "" || rec.MessageID != "" {
			recognised = true
		}
		if rec.UUID == "" {
			continue // summaries, file snapshots, queue operations: not conversation
		}
		rec.at = l.at(rec.UUID)
		r.records = append(r.records, rec)
		r.add(rec)
		if !rec.IsSidechain && (rec.Type == "user" || rec.Type == "assistant" || rec.Type == "system") {
			leaf = rec
		}
	}
	if from.IsZero() && parsed > 0 && !recognised {
		return Result{}, fmt.Errorf("%w: %s holds JSON lines but none of Claude Code's records", ErrNotTranscript, t.Path)
	}
	if from.IsZero() && parsed == 0 && mal.Count > 0 {
		return Result{}, fmt.Errorf("%w: %s holds no JSON lines", ErrNotTranscript, t.Path)
	}
	b := newBuilder()
	if leaf == nil {
		return b.finish(from, mal), nil
	}
	chain, err := r.walk(leaf)
	if err != nil {
		return Result{}, err
	}
	if more := r.recoverParallel(chain); more != nil {
		chain = more
	}
	claudeMessages(b, chain, &mal)
	// Claude Code writes a reply one content block per record, and its
	// stop_reason is often left null: a reply is known to be complete only
	// once a later record follows it in the conversation (the turn's
	// system record, a tool result, the next prompt).
	if n := len(b.msgs); n > 0 {
		if m := b.msgs[n-1]; m.Role == sa.RoleAssistant && !m.Summary && b.marks[n-1] == leaf.at {
			b.openFrom = n - 1
		}
	}
	return b.finish(from, mal), nil
}

// claudeMessages adds the records of a chain (newest first) to b.
func claudeMessages(b *builder, chain []ccStep, mal *Malformed) {
	for j := len(chain) - 1; j >= 0; j-- {
		rec := chain[j].rec
		if chain[j].copyAt != nil {
			if j == len(chain)-1 || chain[j+1].copyAt == nil {
				// The copies answer their own calls again.
				clear(b.answered)
			}
			cp := *rec
			cp.at = *chain[j].copyAt
			rec = &cp
		}
		if err := claudeRecord(b, *rec); err != nil {
			mal.add(rec.at.Line)
		}
	}
}
