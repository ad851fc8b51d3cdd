package hosttest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	_ "modernc.org/sqlite" // OpenCode's database
)

// Placeholder replaces a host's temporary home in a saved transcript.
const Placeholder = "/home/user"

// Transcript returns the host's own record of the conversation, with the
// temporary home replaced by Placeholder (also in the folder names Claude
// Code derives from it) and superagents' path by "superagents", and the
// file name to save it under: Claude Code's JSONL under
// ~/.claude/projects, Codex's rollout under $CODEX_HOME/sessions,
// OpenCode's session as SQL (the schema and rows of its project, session,
// message and part tables) from $XDG_DATA_HOME/opencode/opencode.db.
func (h *Host) Transcript(ctx context.Context, session string) (name string, data []byte, err error) {
	switch h.Name {
	case ClaudeCode:
		var paths []string
		paths, err = filepath.Glob(filepath.Join(h.Home, ".claude", "projects", "*", session+".jsonl"))
		if err == nil && len(paths) != 1 {
			err = fmt.Errorf("want one Claude Code transcript of session %s, found %d", session, len(paths))
		}
		if err == nil {
			name = "session.jsonl"
			data, err = os.ReadFile(paths[0])
			data = trimClaudeCode(data)
		}
	case Codex:
		var paths []string
		paths, err = filepath.Glob(filepath.Join(h.Home, ".codex", "sessions", "*", "*", "*", "rollout-*-"+session+".jsonl"))
		if err == nil && len(paths) != 1 {
			err = fmt.Errorf("want one Codex rollout of thread %s, found %d", session, len(paths))
		}
		if err == nil {
			name = "rollout.jsonl"
			data, err = os.ReadFile(paths[0])
		}
	case OpenCode:
		name = "session.sql"
		data, err = dumpOpenCode(ctx, filepath.Join(h.Home, ".local", "share", "opencode", "opencode.db"), session)
	}
	if err != nil {
		return "", nil, err
	}
	return name, []byte(h.placeholders(string(data))), nil
}

// claudeBulky are the records Claude Code (2.1.328) keeps for itself in a
// transcript that repeat the whole prompt (hundreds of kilobytes): the
// system prompt and tool schemas of a request's shape, a prompt
// snapshot, the skill listing.
var claudeBulky = map[string]bool{"api-request-shape": true, "api-request-blob": true, "prompt_snapshot": true, "skill_listing": true}

// trimLimit is the longest string kept whole in a bulky record.
const trimLimit = 300

// trimClaudeCode cuts the long strings of Claude Code's bulky records to
// their first trimLimit bytes, marked "[...]"; every other line is kept as
// it was written.
func trimClaudeCode(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		kind, _ := rec["type"].(string)
		if att, ok := rec["attachment"].(map[string]any); ok && kind == "attachment" {
			kind, _ = att["type"].(string)
		}
		if !claudeBulky[kind] {
			continue
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(trimStrings(rec)) == nil {
			lines[i] = b.Bytes()
		}
	}
	return bytes.Join(lines, nil)
}

func trimStrings(v any) any {
	switch v := v.(type) {
	case string:
		if len(v) > trimLimit {
			cut := trimLimit
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			return v[:cut] + "[...]"
		}
	case map[string]any:
		for k, e := range v {
			v[k] = trimStrings(e)
		}
	case []any:
		for i, e := range v {
			v[i] = trimStrings(e)
		}
	}
	return v
}

// placeholders hides this machine's paths.
func (h *Host) placeholders(s string) string {
	mangle := func(p string) string {
		b := []byte(p)
		for i, c := range b {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				b[i] = '-'
			}
		}
		return string(b)
	}
	s = strings.ReplaceAll(s, h.superagents, "superagents")
	s = strings.ReplaceAll(s, mangle(h.Home), mangle(Placeholder))
	return strings.ReplaceAll(s, h.Home, Placeholder)
}

// dumpOpenCode writes one session of OpenCode's database as SQL.
func dumpOpenCode(ctx context.Context, path, session string) ([]byte, error) {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var b strings.Builder
	b.WriteString("-- One OpenCode session, dumped from its opencode.db (see README.md).\n\n")
	queries := []struct{ table, where string }{
		{"project", "id = (SELECT project_id FROM session WHERE id = ?)"},
		{"session", "id = ?"},
		{"message", "session_id = ? ORDER BY time_created, id"},
		{"part", "session_id = ? ORDER BY time_created, id"},
	}
	for _, q := range queries {
		var schema string
		if err := db.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", q.table).Scan(&schema); err != nil {
			return nil, fmt.Errorf("the schema of table %s: %w", q.table, err)
		}
		b.WriteString(schema + ";\n")
		if err := dumpRows(ctx, db, &b, q.table, "SELECT * FROM "+q.table+" WHERE "+q.where, session); err != nil {
			return nil, err
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

func dumpRows(ctx context.Context, db *sql.DB, b *strings.Builder, table, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		lits := make([]string, len(vals))
		for i, v := range vals {
			lits[i] = sqlLiteral(v)
		}
		fmt.Fprintf(b, "INSERT INTO %s (%s) VALUES (%s);\n", table, strings.Join(cols, ", "), strings.Join(lits, ", "))
	}
	return rows.Err()
}

func sqlLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return fmt.Sprint(v)
	case float64:
		return fmt.Sprint(v)
	case []byte:
		return "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
}
