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
// a compact_boundary record continues through its logicalParentUuid.

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
}

type ccMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
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

// ccRecord is a parsed line with where it ends.
type ccRecord struct {
	ccLine
	at Position
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
		records    []ccRecord
		byUUID     = map[string]int{}
		leaf       = -1
	)
	for _, l := range lines {
		var rec ccRecord
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
		if _, dup := byUUID[rec.UUID]; !dup {
			// A record copied again later keeps its uuid; the first one
			// holds its place in the conversation.
			byUUID[rec.UUID] = len(records)
		}
		records = append(records, rec)
		if !rec.IsSidechain && (rec.Type == "user" || rec.Type == "assistant" || rec.Type == "system") {
			leaf = len(records) - 1
		}
	}
	if from.IsZero() && parsed > 0 && !recognised {
		return Result{}, fmt.Errorf("%w: %s holds JSON lines but none of Claude Code's records", ErrNotTranscript, t.Path)
	}
	if from.IsZero() && parsed == 0 && mal.Count > 0 {
		return Result{}, fmt.Errorf("%w: %s holds no JSON lines", ErrNotTranscript, t.Path)
	}
	b := newBuilder()
	if leaf < 0 {
		return b.finish(from, mal), nil
	}
	// Walk from the newest record back to the start, or to the record the
	// last read ended with.
	var chain []int
	seen := map[string]bool{}
	cur := records[leaf].UUID
	reached := false
	for cur != "" {
		if from.LastID != "" && cur == from.LastID {
			reached = true
			break
		}
		i, ok := byUUID[cur]
		if !ok || seen[cur] {
			break
		}
		seen[cur] = true
		chain = append(chain, i)
		rec := records[i]
		switch {
		case rec.ParentUUID != nil && *rec.ParentUUID != "":
			cur = *rec.ParentUUID
		case rec.Subtype == "compact_boundary":
			cur = rec.LogicalParentUUID
		default:
			cur = ""
		}
	}
	if from.LastID != "" && !reached {
		return Result{}, fmt.Errorf("%w: the newest message of %s does not lead back to the last one imported", ErrDiverged, t.Path)
	}
	for j := len(chain) - 1; j >= 0; j-- {
		if err := claudeRecord(b, records[chain[j]]); err != nil {
			mal.add(records[chain[j]].at.Line)
		}
	}
	// Claude Code writes a reply one content block per record, and its
	// stop_reason is often left null: a reply is known to be complete only
	// once a later record follows it in the conversation (the turn's
	// system record, a tool result, the next prompt).
	if n := len(b.msgs); n > 0 && len(chain) > 0 {
		if m := b.msgs[n-1]; m.Role == sa.RoleAssistant && !m.Summary && b.marks[n-1] == records[chain[0]].at {
			b.openFrom = n - 1
		}
	}
	return b.finish(from, mal), nil
}

// claudeRecord adds one conversation record to the messages. An error means
// the record's message could not be read.
func claudeRecord(b *builder, rec ccRecord) error {
	switch rec.Type {
	case "system":
		if rec.Subtype == "compact_boundary" {
			b.compaction(rec.at)
		}
		return nil
	case "user", "assistant":
	default:
		return nil
	}
	if rec.IsMeta || rec.Message == nil {
		return nil
	}
	msg := rec.Message
	text, blocks, err := ccContent(msg.Content)
	if err != nil {
		return err
	}
	if rec.Type == "assistant" {
		parts := make([]sa.Part, 0, len(blocks)+1)
		if text != "" {
			parts = append(parts, sa.TextPart(text))
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				if strings.TrimSpace(bl.Text) != "" {
					parts = append(parts, sa.TextPart(bl.Text))
				}
			case "thinking":
				if strings.TrimSpace(bl.Thinking) != "" {
					parts = append(parts, sa.Part{Type: sa.PartReasoning, Text: bl.Thinking, Signature: bl.Signature})
				}
			case "tool_use", "server_tool_use":
				if bl.ID != "" && bl.Name != "" {
					parts = append(parts, sa.Part{Type: sa.PartToolCall, CallID: bl.ID, Name: bl.Name, Input: toolInput(bl.Input)})
				}
			}
		}
		model := msg.Model
		if model == "<synthetic>" {
			model = ""
		}
		b.assistant(msg.ID, model, parts, rec.at)
		return nil
	}
	if rec.IsCompactSummary {
		b.summary(joinTexts(text, blocks), rec.at)
		return nil
	}
	var texts []string
	if t := userText(text); t != "" {
		texts = append(texts, t)
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_result":
			b.result(bl.ToolUseID, ccResultText(bl.Content), bl.IsError, rec.at)
		case "text":
			if t := userText(bl.Text); t != "" {
				texts = append(texts, t)
			}
		case "image", "document":
			texts = append(texts, "["+bl.Type+"]")
		}
	}
	b.user(strings.Join(texts, "\n\n"), rec.at)
	return nil
}

// ccContent reads message content: a string, or an array of blocks.
func ccContent(raw json.RawMessage) (string, []ccBlock, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var blocks []ccBlock
	err := json.Unmarshal(raw, &blocks)
	return "", blocks, err
}

func joinTexts(text string, blocks []ccBlock) string {
	out := []string{}
	if text != "" {
		out = append(out, text)
	}
	for _, bl := range blocks {
		if bl.Type == "text" && bl.Text != "" {
			out = append(out, bl.Text)
		}
	}
	return strings.Join(out, "\n\n")
}

// ccResultText reads a tool result's content: a string or text blocks.
func ccResultText(raw json.RawMessage) string {
	text, blocks, err := ccContent(raw)
	if err != nil {
		return string(raw)
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			if text != "" {
				text += "\n"
			}
			text += bl.Text
		case "image", "document":
			if text != "" {
				text += "\n"
			}
			text += "[" + bl.Type + "]"
		}
	}
	return text
}

// userText drops what Claude Code writes into user records for its own
// bookkeeping: slash-command echoes and local command output.
func userText(s string) string {
	t := strings.TrimSpace(s)
	for _, p := range []string{"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>"} {
		if strings.HasPrefix(t, p) {
			return ""
		}
	}
	return t
}
