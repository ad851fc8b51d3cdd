package transcripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	ToolName  string          `json:"tool_name"` // tool_reference
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
	// chained marks a record the walk took into the conversation.
	chained bool
}

// ccCompact is a compact_boundary's metadata. Since 2.1.3xx, /compact keeps
// the newest messages word for word after the summary: preservedSegment
// names the first (head) and last (tail) of them and the record they follow
// (anchor, the summary); preservedMessages lists them. They stay in the
// file where they were first written, before the boundary, with their
// original parents.
type ccCompact struct {
	PreservedSegment *struct {
		HeadUUID   string `json:"headUuid"`
		AnchorUUID string `json:"anchorUuid"`
		TailUUID   string `json:"tailUuid"`
	} `json:"preservedSegment"`
	PreservedMessages *struct {
		AnchorUUID string   `json:"anchorUuid"`
		UUIDs      []string `json:"uuids"`
	} `json:"preservedMessages"`
}

// ccSegment is the preserved tail of one compaction.
type ccSegment struct {
	boundary           *ccRecord
	head, anchor, tail string
	list               []string
}

// preservedMark is the Position.LastID of a copy of a preserved message:
// the copy follows the summary, so it is named by both.
func preservedMark(anchor, uuid string) string { return "preserved " + anchor + " " + uuid }

// ccReader walks one read's records, and when it must, those before the
// position the read started from.
type ccReader struct {
	path    string
	from    Position
	records []*ccRecord
	byUUID  map[string]*ccRecord
	// byAnchor and byTail find the preserved segments of the boundaries;
	// copied holds the boundaries whose segment the walk has copied.
	byAnchor, byTail map[string]*ccSegment
	copied           map[*ccRecord]bool
	older            bool // the records before from are loaded
}

func (r *ccReader) add(rec *ccRecord) {
	if _, dup := r.byUUID[rec.UUID]; !dup {
		// A record copied again later keeps its uuid; the first one
		// holds its place in the conversation.
		r.byUUID[rec.UUID] = rec
	}
	if rec.Subtype != "compact_boundary" || rec.CompactMetadata == nil {
		return
	}
	seg := &ccSegment{boundary: rec}
	if ps := rec.CompactMetadata.PreservedSegment; ps != nil {
		seg.head, seg.anchor, seg.tail = ps.HeadUUID, ps.AnchorUUID, ps.TailUUID
	}
	if pm := rec.CompactMetadata.PreservedMessages; pm != nil && len(pm.UUIDs) > 0 {
		seg.list = pm.UUIDs
		if seg.anchor == "" {
			seg.anchor, seg.head, seg.tail = pm.AnchorUUID, pm.UUIDs[0], pm.UUIDs[len(pm.UUIDs)-1]
		}
	}
	if seg.anchor == "" || seg.tail == "" || seg.head == "" {
		return
	}
	if r.byAnchor == nil {
		r.byAnchor, r.byTail = map[string]*ccSegment{}, map[string]*ccSegment{}
	}
	r.byAnchor[seg.anchor] = seg
	r.byTail[seg.tail] = seg
}

// lookup finds a record by uuid, loading the records before the read's
// start the first time one is not among the read's own: a compaction can
// name records written before it (its preserved messages, the record
// before it).
func (r *ccReader) lookup(uuid string) (*ccRecord, bool) {
	if rec, ok := r.byUUID[uuid]; ok {
		return rec, true
	}
	if r.loadOlder() {
		rec, ok := r.byUUID[uuid]
		return rec, ok
	}
	return nil, false
}

// loadOlder adds the records before the read's start; it reports whether
// there were any to add.
func (r *ccReader) loadOlder() bool {
	if r.older || r.from.Offset == 0 {
		return false
	}
	r.older = true
	lines, err := readLines(r.path, Position{})
	if err != nil {
		return false
	}
	var older []*ccRecord
	for _, l := range lines {
		if l.end > r.from.Offset {
			break
		}
		rec := &ccRecord{}
		if json.Unmarshal(l.data, &rec.ccLine) != nil || rec.UUID == "" {
			continue
		}
		rec.at = l.at(rec.UUID)
		older = append(older, rec)
	}
	// The older records come first: rebuild the index in file order.
	r.records = append(older, r.records...)
	r.byUUID = make(map[string]*ccRecord, len(r.records))
	r.byAnchor, r.byTail = nil, nil
	for _, rec := range r.records {
		r.add(rec)
	}
	return len(older) > 0
}

// before returns the newest record of the main conversation written before
// rec: where a boundary whose logical parent is missing continues.
func (r *ccReader) before(rec *ccRecord) (*ccRecord, bool) {
	for pass := 0; pass < 2; pass++ {
		for i := len(r.records) - 1; i >= 0; i-- {
			c := r.records[i]
			if c.at.Offset < rec.at.Offset && !c.IsSidechain {
				return c, true
			}
		}
		if !r.loadOlder() {
			break
		}
	}
	return nil, false
}

// preserved returns a segment's records, oldest first: the chain from its
// tail back to its head, or, when that chain is broken, the records listed.
func (r *ccReader) preserved(seg *ccSegment) []*ccRecord {
	var back []*ccRecord
	seen := map[string]bool{}
	for cur := seg.tail; cur != "" && !seen[cur]; {
		rec, ok := r.lookup(cur)
		if !ok || rec.at.Offset > seg.boundary.at.Offset {
			back = nil
			break
		}
		seen[cur] = true
		back = append(back, rec)
		if cur == seg.head {
			slices.Reverse(back)
			return back
		}
		if rec.ParentUUID == nil {
			break
		}
		cur = *rec.ParentUUID
	}
	var out []*ccRecord
	for _, u := range seg.list {
		if rec, ok := r.lookup(u); ok && rec.at.Offset < seg.boundary.at.Offset {
			out = append(out, rec)
		}
	}
	return out
}

// ccStep is one record of the conversation, or a copy of a preserved one
// after its compaction's summary.
type ccStep struct {
	rec *ccRecord
	// copyAt, on a copy, is where it stands: the summary's position, under
	// a name of its own.
	copyAt *Position
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

// recoverParallel puts back what a walk along parents misses. Claude Code
// writes a reply with parallel tool calls as one record per call, sharing
// the reply's message id, and each result as a child of the record of its
// own call; the next record follows only one of them. The replies'
// records and results that are off the chain go right after the reply's
// last record on it, records first, each kind in the order written (as
// Claude Code's own reader does). It returns nil when nothing is missing.
func (r *ccReader) recoverParallel(chain []ccStep) []ccStep {
	last := map[string]*ccRecord{} // message id: the reply's newest record on the chain
	for _, st := range chain {
		if id := ccMessageID(st.rec); id != "" && st.copyAt == nil && last[id] == nil {
			last[id] = st.rec
		}
	}
	if len(last) == 0 {
		return nil
	}
	var insert map[*ccRecord][]*ccRecord
	add := func(after, rec *ccRecord) {
		if insert == nil {
			insert = map[*ccRecord][]*ccRecord{}
		}
		insert[after] = append(insert[after], rec)
		rec.chained = true
	}
	// Records of the replies first, then results; only this read's
	// records: older ones were imported already.
	for pass := 0; pass < 2; pass++ {
		for _, rec := range r.records {
			if rec.chained || rec.IsSidechain || r.from.Offset > 0 && rec.at.Offset <= r.from.Offset || r.byUUID[rec.UUID] != rec {
				continue
			}
			if pass == 0 {
				if id := ccMessageID(rec); id != "" && last[id] != nil {
					add(last[id], rec)
				}
				continue
			}
			if rec.Type != "user" || rec.ParentUUID == nil || rec.Message == nil || !bytes.Contains(rec.Message.Content, []byte(`"tool_result"`)) {
				continue
			}
			if parent, ok := r.byUUID[*rec.ParentUUID]; ok && parent.chained {
				if id := ccMessageID(parent); id != "" && last[id] != nil {
					add(last[id], rec)
				}
			}
		}
	}
	if insert == nil {
		return nil
	}
	out := make([]ccStep, 0, len(chain)+len(insert))
	for _, st := range chain {
		if st.copyAt == nil {
			add := insert[st.rec]
			for k := len(add) - 1; k >= 0; k-- {
				out = append(out, ccStep{rec: add[k]})
			}
		}
		out = append(out, st)
	}
	return out
}

// ccMessageID is the message id of an assistant record of the main
// conversation.
func ccMessageID(rec *ccRecord) string {
	if rec.Type != "assistant" || rec.Message == nil {
		return ""
	}
	return rec.Message.ID
}

// walk follows the conversation from the newest record back to the start,
// or to the record the read started after, and returns it newest first.
// Across a compaction it goes on through the boundary's logical parent (or,
// when that record is not in the file, the record written just before the
// boundary), so that what came before is imported too; the messages a
// compaction preserved come again after its summary, as Claude Code's
// model sees them.
func (r *ccReader) walk(leaf *ccRecord) ([]ccStep, error) {
	var chain []ccStep
	seen := map[string]bool{}
	cur, prev := leaf.UUID, (*ccRecord)(nil)
	reached := false
	for cur != "" {
		// Reaching a compaction's summary, or its preserved tail from a
		// record written after it: the preserved messages come first.
		if seg := r.segmentAt(cur, prev); seg != nil {
			if r.copied == nil {
				r.copied = map[*ccRecord]bool{}
			}
			r.copied[seg.boundary] = true
			kept := r.preserved(seg)
			at := seg.boundary.at
			if anchor, ok := r.lookup(seg.anchor); ok {
				at = anchor.at
			}
			stop := false
			for k := len(kept) - 1; k >= 0; k-- {
				pos := at
				pos.LastID = preservedMark(seg.anchor, kept[k].UUID)
				if pos.LastID == r.from.LastID {
					stop = true
					break
				}
				chain = append(chain, ccStep{rec: kept[k], copyAt: &pos})
			}
			if stop {
				reached = true
				break
			}
			cur = seg.anchor
		}
		if r.from.LastID != "" && cur == r.from.LastID {
			reached = true
			break
		}
		rec, ok := r.lookup(cur)
		if !ok || seen[cur] {
			break
		}
		seen[cur] = true
		rec.chained = true
		chain = append(chain, ccStep{rec: rec})
		prev = rec
		switch {
		case rec.ParentUUID != nil && *rec.ParentUUID != "":
			cur = *rec.ParentUUID
		case rec.Subtype == "compact_boundary":
			cur = rec.LogicalParentUUID
			if cur != r.from.LastID {
				if _, ok := r.lookup(cur); !ok {
					// The logical parent is not in the file (seen in
					// 2.1.39): what came before is the chain that ends at
					// the record written just before the boundary.
					cur = ""
					if before, ok := r.before(rec); ok {
						cur = before.UUID
					}
				}
			}
		default:
			cur = ""
		}
	}
	if r.from.LastID != "" && !reached {
		return nil, fmt.Errorf("%w: the newest message of %s does not lead back to the last one imported", ErrDiverged, r.path)
	}
	return chain, nil
}

// segmentAt returns the preserved segment whose messages go before cur in
// the walk: cur is its summary, or its tail reached from a record written
// after the boundary (the boundary itself leads to the tail too, but as the
// end of what came before).
func (r *ccReader) segmentAt(cur string, prev *ccRecord) *ccSegment {
	if _, ok := r.byUUID[cur]; !ok && cur != r.from.LastID {
		// The compaction may be older than the read's start.
		r.loadOlder()
	}
	if r.byAnchor == nil {
		return nil
	}
	seg := r.byAnchor[cur]
	if seg == nil {
		seg = r.byTail[cur]
		if seg == nil || prev == nil || prev.at.Offset <= seg.boundary.at.Offset {
			return nil
		}
	}
	if r.copied[seg.boundary] {
		return nil
	}
	return seg
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
	var loaded []string
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_reference":
			loaded = append(loaded, bl.ToolName)
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
	// Claude Code defers MCP tools: its model loads them with ToolSearch,
	// whose result is tool_reference blocks and no text. The call stays,
	// saying what it loaded, rather than being left out: it explains the
	// calls to those tools that follow, and a call without its result
	// would look unanswered.
	if len(loaded) > 0 && strings.TrimSpace(text) == "" {
		text = "loaded tools: " + strings.Join(loaded, ", ")
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
