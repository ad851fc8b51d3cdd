package transcripts

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sa "github.com/superagents/superagents"
)

// Codex writes one JSONL "rollout" per session at
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl ($CODEX_HOME
// defaults to ~/.codex). Each line is {timestamp, type, payload}: the first
// is session_meta (id, cwd); response_item lines hold the conversation as
// the model saw it; compacted holds a compaction's summary; turn_context
// and event_msg repeat for the interface what response_item says, and are
// skipped.

type cxLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

type cxMeta struct {
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
	// Source is "cli", "vscode", "exec"... or, for a sub-agent's thread,
	// an object {"subagent": ...}; newer versions also say so in
	// thread_source.
	Source       json.RawMessage `json:"source"`
	ThreadSource string          `json:"thread_source"`
}

// subagent reports whether the rollout is a thread Codex spawned for a
// sub-agent: it shares its parent's working directory but is not a
// conversation of the user's.
func (m cxMeta) subagent() bool {
	if m.ThreadSource == "subagent" {
		return true
	}
	var src map[string]json.RawMessage
	if json.Unmarshal(m.Source, &src) != nil {
		return false
	}
	_, ok := src["subagent"]
	return ok
}

type cxItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   []cxText        `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Message   string          `json:"message"` // compacted
	// ReplacementHistory is, in compacted, the history that replaces the
	// conversation; remote compaction leaves Message empty and keeps only
	// this.
	ReplacementHistory []cxItem `json:"replacement_history"`
}

type cxText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexHome is $CODEX_HOME, or ~/.codex.
func codexHome(env Env) (string, error) {
	if d := env.get("CODEX_HOME"); d != "" {
		return d, nil
	}
	home, err := env.home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".codex"), nil
}

// codexRollouts lists the rollout files under the folders of Codex's home
// named (sessions, archived_sessions), with their session_meta.
func codexRollouts(env Env, folders []string, keep func(path string, meta cxMeta) bool) ([]Transcript, error) {
	root, err := codexHome(env)
	if err != nil {
		return nil, err
	}
	var out []Transcript
	for _, folder := range folders {
		top := filepath.Join(root, folder)
		err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == top && os.IsNotExist(err) {
					return filepath.SkipAll
				}
				return nil // an unreadable folder is skipped, not fatal
			}
			name := d.Name()
			if d.IsDir() || !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				return nil
			}
			meta, ok := codexMeta(p)
			if !ok || !keep(p, meta) {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			out = append(out, Transcript{Host: Codex, Path: p, SessionID: meta.ID, Dir: meta.Cwd, Updated: fi.ModTime()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find Codex transcripts: %w", err)
		}
	}
	return out, nil
}

// codexMeta reads a rollout's first line, its session_meta.
func codexMeta(path string) (cxMeta, bool) {
	f, err := os.Open(path)
	if err != nil {
		return cxMeta{}, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	line, err := r.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return cxMeta{}, false
	}
	var l cxLine
	var m cxMeta
	if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" || json.Unmarshal(l.Payload, &m) != nil || m.ID == "" {
		return cxMeta{}, false
	}
	return m, true
}

// findCodex lists the user's conversations held in dir: not the threads of
// sub-agents, which Codex writes beside them with the same directory, nor
// the archived ones.
func findCodex(env Env, dir string) ([]Transcript, error) {
	return codexRollouts(env, []string{"sessions"}, func(_ string, m cxMeta) bool { return filepath.Clean(m.Cwd) == dir && !m.subagent() })
}

// lookupCodex finds a session by id, archived ones too (Codex moves them,
// unchanged, to archived_sessions).
func lookupCodex(env Env, id string) ([]Transcript, error) {
	return codexRollouts(env, []string{"sessions", "archived_sessions"}, func(p string, m cxMeta) bool {
		return m.ID == id || strings.HasSuffix(filepath.Base(p), "-"+id+".jsonl")
	})
}

// codexNoise starts the pieces of user messages that Codex writes itself
// for its model: the environment, the instructions of AGENTS.md (older
// versions: user_instructions), the plugins it recommends, its own
// context, and the note that a turn was interrupted. Newer versions put
// several in one message, beside the user's own words, so each piece is
// judged alone.
var codexNoise = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ", "<recommended_plugins>", "<codex_internal_context", "<turn_aborted>"}

// codexInjected reports whether a piece of a user message is Codex's own.
func codexInjected(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range codexNoise {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func readCodex(t Transcript, from Position) (Result, error) {
	lines, err := readLines(t.Path, from)
	if err != nil {
		return Result{}, err
	}
	var (
		mal    Malformed
		parsed int
		meta   bool
		closed Position // after the last line that completes a response
	)
	b := newBuilder()
	for _, l := range lines {
		var line cxLine
		if err := json.Unmarshal(l.data, &line); err != nil || line.Type == "" {
			mal.add(l.no)
			continue
		}
		parsed++
		at := l.at(fmt.Sprintf("line %d", l.no))
		switch line.Type {
		case "session_meta":
			meta = true
		case "turn_context":
			var tc struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(line.Payload, &tc) == nil && tc.Model != "" {
				b.model = tc.Model
			}
		case "event_msg":
			// A model response is complete when Codex counts its tokens or
			// ends the turn; its items come one line each before that.
			var ev struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(line.Payload, &ev) == nil && (ev.Type == "token_count" || ev.Type == "task_complete" || ev.Type == "turn_aborted") {
				closed = at
			}
		case "compacted":
			var it cxItem
			if json.Unmarshal(line.Payload, &it) != nil {
				mal.add(l.no)
				continue
			}
			// Without readable text the compaction is left out, and the
			// conversation before it stays whole.
			b.summary(codexSummary(it), at)
		case "response_item":
			var it cxItem
			if json.Unmarshal(line.Payload, &it) != nil {
				mal.add(l.no)
				continue
			}
			codexItem(b, it, at)
		}
	}
	if from.IsZero() && (parsed > 0 || mal.Count > 0) && !meta {
		return Result{}, fmt.Errorf("%w: %s has no session_meta line, so it is not a Codex rollout", ErrNotTranscript, t.Path)
	}
	if n := len(b.msgs); n > 0 {
		if m := b.msgs[n-1]; m.Role == sa.RoleAssistant && !m.Summary && b.marks[n-1].Offset > closed.Offset {
			b.openFrom = n - 1
		}
	}
	return b.finish(from, mal), nil
}

func codexItem(b *builder, it cxItem, at Position) {
	switch it.Type {
	case "message":
		var content []cxText
		_ = json.Unmarshal(it.Content, &content)
		var texts []string
		for _, c := range content {
			switch c.Type {
			case "input_text", "output_text", "text":
				if strings.TrimSpace(c.Text) != "" && (it.Role != "user" || !codexInjected(c.Text)) {
					texts = append(texts, c.Text)
				}
			case "input_image":
				texts = append(texts, "[image]")
			}
		}
		text := strings.Join(texts, "\n\n")
		switch it.Role {
		case "user":
			b.user(text, at)
		case "assistant":
			if text != "" {
				b.assistant("reply", "", []sa.Part{sa.TextPart(text)}, at)
			}
		}
	case "reasoning":
		var parts []sa.Part
		for _, s := range it.Summary {
			if strings.TrimSpace(s.Text) != "" {
				parts = append(parts, sa.Part{Type: sa.PartReasoning, Text: s.Text})
			}
		}
		if len(parts) == 0 {
			var content []cxText
			_ = json.Unmarshal(it.Content, &content)
			for _, c := range content {
				if strings.TrimSpace(c.Text) != "" {
					parts = append(parts, sa.Part{Type: sa.PartReasoning, Text: c.Text})
				}
			}
		}
		b.assistant("reply", "", parts, at)
	case "function_call":
		if it.CallID != "" && it.Name != "" {
			b.assistant("reply", "", []sa.Part{{Type: sa.PartToolCall, CallID: it.CallID, Name: it.Name, Input: stringInput(it.Arguments)}}, at)
		}
	case "custom_tool_call":
		if it.CallID != "" && it.Name != "" {
			b.assistant("reply", "", []sa.Part{{Type: sa.PartToolCall, CallID: it.CallID, Name: it.Name, Input: wrapInput(it.Input)}}, at)
		}
	case "local_shell_call":
		if it.CallID != "" {
			b.assistant("reply", "", []sa.Part{{Type: sa.PartToolCall, CallID: it.CallID, Name: "local_shell", Input: toolInput(it.Action)}}, at)
		}
	case "function_call_output", "custom_tool_call_output":
		out, failed := codexOutput(it.Output)
		b.result(it.CallID, out, failed, at)
	}
}

// codexSummary is a compaction's summary: its message, or else the text of
// the messages of the history that replaces the conversation.
func codexSummary(it cxItem) string {
	if strings.TrimSpace(it.Message) != "" {
		return it.Message
	}
	var texts []string
	for _, h := range it.ReplacementHistory {
		if h.Type != "message" || h.Role != "user" && h.Role != "assistant" {
			continue
		}
		var content []cxText
		_ = json.Unmarshal(h.Content, &content)
		for _, c := range content {
			if strings.TrimSpace(c.Text) == "" || h.Role == "user" && codexInjected(c.Text) {
				continue
			}
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// codexOutput reads a tool output: a string, an array of content items, or
// (older rollouts) an object {content, success}.
func codexOutput(raw json.RawMessage) (string, bool) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		// The shell and apply_patch tools answer with a string that holds
		// JSON: {"output": ..., "metadata": {"exit_code": ...}}.
		if strings.HasPrefix(s, "{") {
			var exec struct {
				Output   *string `json:"output"`
				Metadata *struct {
					ExitCode int `json:"exit_code"`
				} `json:"metadata"`
			}
			if json.Unmarshal([]byte(s), &exec) == nil && exec.Output != nil && exec.Metadata != nil {
				return *exec.Output, exec.Metadata.ExitCode != 0
			}
		}
		return s, false
	case '[':
		var items []cxText
		if json.Unmarshal(raw, &items) == nil {
			var texts []string
			for _, it := range items {
				if it.Type == "input_image" {
					texts = append(texts, "[image]")
				} else if it.Text != "" {
					texts = append(texts, it.Text)
				}
			}
			return strings.Join(texts, "\n"), false
		}
	case '{':
		var obj struct {
			Content string `json:"content"`
			Success *bool  `json:"success"`
		}
		if json.Unmarshal(raw, &obj) == nil {
			return obj.Content, obj.Success != nil && !*obj.Success
		}
	}
	return string(raw), false
}
