package transcripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// The conversation of a Claude Code transcript is a chain of records: from
// the newest back along parentUuid, across compactions (through a
// boundary's logical parent, with the messages a compaction preserved again
// after its summary), with the records of parallel tool calls that are off
// the chain put back.

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
