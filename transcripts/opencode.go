package transcripts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // OpenCode's database, opened read-only

	sa "github.com/superagents/superagents"
)

// OpenCode keeps its data under $XDG_DATA_HOME/opencode (default
// ~/.local/share/opencode). Current versions keep sessions in the SQLite
// database opencode.db there (opencode-<channel>.db for builds of other
// channels): tables session (id, parent_id, directory,
// title, time_updated, ...), message (id, session_id, data) and part (id,
// message_id, session_id, data), where data is the JSON of the message or
// part. Older versions wrote the same JSON as files: storage/session/
// <project>/<session>.json, storage/message/<session>/<message>.json and
// storage/part/<message>/<part>.json. Message and part ids sort in the
// order they were created.

type ocSession struct {
	ID        string `json:"id"`
	ParentID  string `json:"parentID"`
	Directory string `json:"directory"`
	Time      struct {
		Updated int64 `json:"updated"`
	} `json:"time"`
}

type ocMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Summary json.RawMessage `json:"summary"`
	ModelID string          `json:"modelID"`
	Time    struct {
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error json.RawMessage `json:"error"`
	parts []ocPart
}

type ocPart struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Ignored  bool   `json:"ignored"`
	Filename string `json:"filename"`
	CallID   string `json:"callID"`
	Tool     string `json:"tool"`
	State    struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
		Time   struct {
			Compacted int64 `json:"compacted"`
		} `json:"time"`
	} `json:"state"`
}

func opencodeData(env Env) (string, error) {
	if d := env.get("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode"), nil
	}
	home, err := env.home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "opencode"), nil
}

// opencodeCleared is what OpenCode's model is sent instead of a tool
// output it pruned (state.time.compacted set).
const opencodeCleared = "[Old tool result content cleared]"

// OpenCodeDB is the database file name under OpenCode's data folder.
const OpenCodeDB = "opencode.db"

// openReadOnly opens an OpenCode database for reading only: SQLite's
// read-only mode, and query_only on top, so nothing can be written. When
// no write-ahead log is beside it, no OpenCode has it open: it is opened
// as immutable, which creates no -wal or -shm file either. While OpenCode
// runs, its log holds the newest messages, so the log is read through the
// shared-memory index OpenCode keeps beside it.
func openReadOnly(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "busy_timeout(5000)")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open OpenCode database: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// opencodeSessions lists OpenCode's top-level sessions that keep says to,
// from the database and from the JSON storage.
func opencodeSessions(ctx context.Context, env Env, keep func(ocSession) bool) ([]Transcript, error) {
	data, err := opencodeData(env)
	if err != nil {
		return nil, err
	}
	var out []Transcript
	inDB := map[string]bool{}
	for _, dbPath := range opencodeDBs(data) {
		found, err := opencodeDBSessions(ctx, dbPath, keep, inDB)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	files, _ := filepath.Glob(filepath.Join(data, "storage", "session", "*", "*.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s ocSession
		// OpenCode leaves the JSON files behind when it moves them into its
		// database: the database's copy is the live one.
		if json.Unmarshal(raw, &s) != nil || s.ID == "" || inDB[s.ID] || !keep(s) {
			continue
		}
		out = append(out, Transcript{Host: OpenCode, Path: f, SessionID: s.ID, Dir: s.Directory, Updated: time.UnixMilli(s.Time.Updated)})
	}
	return out, nil
}

// opencodeDBs lists OpenCode's databases: opencode.db, which release
// builds use, and then opencode-<channel>.db of other channels.
func opencodeDBs(data string) []string {
	var out []string
	if _, err := os.Stat(filepath.Join(data, OpenCodeDB)); err == nil {
		out = append(out, filepath.Join(data, OpenCodeDB))
	}
	others, _ := filepath.Glob(filepath.Join(data, "opencode-*.db"))
	sort.Strings(others)
	return append(out, others...)
}

// opencodeDBSessions lists the sessions of one database that keep says to;
// a session already seen in another database is passed over.
func opencodeDBSessions(ctx context.Context, dbPath string, keep func(ocSession) bool, seen map[string]bool) ([]Transcript, error) {
	db, err := openReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(parent_id, ''), directory, time_updated FROM session`)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotTranscript, dbPath, err)
	}
	defer rows.Close()
	var out []Transcript
	for rows.Next() {
		var s ocSession
		if err := rows.Scan(&s.ID, &s.ParentID, &s.Directory, &s.Time.Updated); err != nil {
			return nil, fmt.Errorf("read OpenCode sessions: %w", err)
		}
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		if keep(s) {
			out = append(out, Transcript{Host: OpenCode, Path: dbPath, SessionID: s.ID, Dir: s.Directory, Updated: time.UnixMilli(s.Time.Updated)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read OpenCode sessions: %w", err)
	}
	return out, nil
}

func findOpenCode(ctx context.Context, env Env, dir string) ([]Transcript, error) {
	return opencodeSessions(ctx, env, func(s ocSession) bool {
		return s.ParentID == "" && s.Directory != "" && filepath.Clean(s.Directory) == dir
	})
}

func lookupOpenCode(ctx context.Context, env Env, id string) ([]Transcript, error) {
	return opencodeSessions(ctx, env, func(s ocSession) bool { return s.ID == id })
}

// inspectOpenCode reads an OpenCode session file given by path.
func inspectOpenCode(path string) (Transcript, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Transcript{}, fmt.Errorf("read %s: %w", path, err)
	}
	var s ocSession
	if json.Unmarshal(raw, &s) != nil || !strings.HasPrefix(s.ID, "ses") {
		return Transcript{}, fmt.Errorf("%w: %s is not an OpenCode session file (storage/session/<project>/<session>.json); for the database give the session id", ErrNotTranscript, path)
	}
	return Transcript{Host: OpenCode, Path: path, SessionID: s.ID, Dir: s.Directory, Updated: time.UnixMilli(s.Time.Updated)}, nil
}

func readOpenCode(ctx context.Context, t Transcript, from Position) (Result, error) {
	var (
		msgs []ocMessage
		mal  Malformed
		err  error
	)
	if strings.HasSuffix(t.Path, ".db") {
		msgs, err = opencodeFromDB(ctx, t, from.LastID, &mal)
	} else {
		msgs, err = opencodeFromFiles(t, from.LastID, &mal)
	}
	if err != nil {
		return Result{}, err
	}
	b := newBuilder()
	for i, m := range msgs {
		before := len(b.msgs)
		opencodeMessage(b, m)
		// A reply still being written is pending with all that follows;
		// one that never completed but was followed by more messages was
		// abandoned, and is taken as it is.
		if m.Role == "assistant" && m.Time.Completed == 0 && i == len(msgs)-1 && len(b.msgs) > before {
			b.openFrom = before
		}
	}
	return b.finish(from, mal), nil
}

// opencodeMessage adds one OpenCode message: user text, or an assistant
// reply. A reply holds one step (step-start part) per model call; each step
// becomes an assistant message followed by its tool results.
func opencodeMessage(b *builder, m ocMessage) {
	at := Position{LastID: m.ID}
	var parts, results []sa.Part
	var texts []string
	flush := func() {
		if m.Role != "assistant" || string(m.Summary) == "true" {
			return
		}
		b.assistant("", m.ModelID, parts, at)
		for _, r := range results {
			b.result(r.CallID, r.Output, r.IsError, at)
			if r.Compacted {
				last := b.last()
				last.Parts[len(last.Parts)-1].Compacted = true
			}
		}
		parts, results = nil, nil
	}
	for _, p := range m.parts {
		switch p.Type {
		case "step-start":
			flush()
		case "text":
			if !p.Ignored && strings.TrimSpace(p.Text) != "" {
				texts = append(texts, p.Text)
				parts = append(parts, sa.TextPart(p.Text))
			}
		case "file":
			texts = append(texts, "[file "+p.Filename+"]")
		case "reasoning":
			if strings.TrimSpace(p.Text) != "" {
				parts = append(parts, sa.Part{Type: sa.PartReasoning, Text: p.Text})
			}
		case "compaction":
			if m.Role == "user" {
				b.compaction(at)
			}
		case "tool":
			if p.CallID == "" || p.Tool == "" {
				continue
			}
			parts = append(parts, sa.Part{Type: sa.PartToolCall, CallID: p.CallID, Name: p.Tool, Input: toolInput(p.State.Input)})
			switch p.State.Status {
			case "completed":
				r := sa.Part{Type: sa.PartToolResult, CallID: p.CallID, Output: p.State.Output}
				if p.State.Time.Compacted != 0 {
					// OpenCode keeps a pruned output on disk but sends its
					// model this text instead.
					r.Output, r.Compacted = opencodeCleared, true
				}
				results = append(results, r)
			case "error":
				results = append(results, sa.Part{Type: sa.PartToolResult, CallID: p.CallID, Output: p.State.Error, IsError: true})
			}
		}
	}
	switch {
	case m.Role == "user":
		b.user(strings.Join(texts, "\n\n"), at)
	case m.Role == "assistant" && string(m.Summary) == "true":
		b.summary(strings.Join(texts, "\n\n"), at)
	default:
		flush()
	}
}

func opencodeFromDB(ctx context.Context, t Transcript, after string, mal *Malformed) ([]ocMessage, error) {
	db, err := openReadOnly(t.Path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read OpenCode database: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM session WHERE id = ?`, t.SessionID).Scan(&n); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotTranscript, t.Path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: OpenCode has no session %s", sa.ErrNotFound, t.SessionID)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, data FROM message WHERE session_id = ? AND id > ? ORDER BY id`, t.SessionID, after)
	if err != nil {
		return nil, fmt.Errorf("read OpenCode messages: %w", err)
	}
	var msgs []ocMessage
	index := map[string]int{}
	var line int64
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read OpenCode messages: %w", err)
		}
		line++
		var m ocMessage
		if json.Unmarshal([]byte(data), &m) != nil {
			mal.add(line)
			continue
		}
		m.ID = id
		index[id] = len(msgs)
		msgs = append(msgs, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read OpenCode messages: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT message_id, id, data FROM part WHERE session_id = ? AND message_id > ? ORDER BY message_id, id`, t.SessionID, after)
	if err != nil {
		return nil, fmt.Errorf("read OpenCode parts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var mid, id, data string
		if err := rows.Scan(&mid, &id, &data); err != nil {
			return nil, fmt.Errorf("read OpenCode parts: %w", err)
		}
		i, ok := index[mid]
		if !ok {
			continue
		}
		var p ocPart
		if json.Unmarshal([]byte(data), &p) != nil {
			mal.add(int64(i + 1))
			continue
		}
		p.ID = id
		msgs[i].parts = append(msgs[i].parts, p)
	}
	return msgs, rows.Err()
}

func opencodeFromFiles(t Transcript, after string, mal *Malformed) ([]ocMessage, error) {
	storage := filepath.Dir(filepath.Dir(filepath.Dir(t.Path)))
	if filepath.Base(filepath.Dir(filepath.Dir(t.Path))) != "session" {
		return nil, fmt.Errorf("%w: %s is not under OpenCode's storage/session folder", ErrNotTranscript, t.Path)
	}
	files, err := filepath.Glob(filepath.Join(storage, "message", t.SessionID, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list OpenCode messages: %w", err)
	}
	sort.Strings(files)
	var msgs []ocMessage
	for i, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		if id <= after {
			continue
		}
		var m ocMessage
		if err := readJSON(f, &m); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			mal.add(int64(i + 1))
			continue
		}
		m.ID = id
		parts, _ := filepath.Glob(filepath.Join(storage, "part", id, "*.json"))
		sort.Strings(parts)
		for _, pf := range parts {
			var p ocPart
			if err := readJSON(pf, &p); err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					mal.add(int64(i + 1))
				}
				continue
			}
			m.parts = append(m.parts, p)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
