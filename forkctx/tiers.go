package forkctx

import (
	"strings"

	sa "github.com/superagents/superagents"
)

// resultClass says how the truncation stage treats a tool result.
type resultClass int

const (
	// classTiered results take a tier slot and may be cut.
	classTiered resultClass = iota
	// classCompacted results were already cleared: passed through, no slot.
	classCompacted
	// classEmpty results have nothing to cut: no slot.
	classEmpty
	// classExempt results belong to a no-truncation tool: whole, no slot.
	classExempt
)

// toolResult is one tool_result part of the kept history.
type toolResult struct {
	msg, part int // where the part is in the kept history
	call      int // index in tierPlan.calls, or -1 when no call in the kept history matches
	name      string
	class     resultClass
	tier      int
	// newer counts the tiered results after this one.
	newer int
	// text is the content as the digest shows it; cut and headTail say
	// how it was made.
	text          string
	cut, headTail bool
}

// toolCall is one tool_call part of the kept history.
type toolCall struct {
	result int // index in tierPlan.results, or -1 when no result came yet
	name   string
	tier   int
	// resultsBefore counts the results (of any class) before the call.
	resultsBefore int
}

// tierPlan lists the calls and results of the kept history in the order
// they appear (message by message, part by part), so the formatter finds
// the k-th call or result of its own walk at index k.
type tierPlan struct {
	calls   []toolCall
	results []toolResult
}

// planTiers matches results to calls by call id, gives each result a tier
// by counting tiered results from the newest back, and truncates it. A
// call takes the tier of its result; a call without one, the tier of its
// position.
func (p *Pipeline) planTiers(history []sa.Message, st *ToolStats) tierPlan {
	var plan tierPlan
	open := make(map[string]int) // call id -> call index awaiting its result
	for i, m := range history {
		for j, part := range m.Parts {
			switch part.Type {
			case sa.PartToolCall:
				plan.calls = append(plan.calls, toolCall{result: -1, name: part.Name, resultsBefore: len(plan.results)})
				open[part.CallID] = len(plan.calls) - 1
			case sa.PartToolResult:
				r := toolResult{msg: i, part: j, call: -1, name: part.Name}
				if c, ok := open[part.CallID]; ok {
					delete(open, part.CallID)
					r.call = c
					plan.calls[c].result = len(plan.results)
					if r.name == "" {
						r.name = plan.calls[c].name
					}
				}
				plan.results = append(plan.results, r)
			}
		}
	}
	results := plan.results
	partOf := func(r *toolResult) sa.Part { return history[r.msg].Parts[r.part] }

	// Looking for the compaction marker reads every output: in parallel.
	parallel(len(results), func(i int) {
		results[i].class = p.classify(partOf(&results[i]), results[i].name)
	})

	// tieredBefore[k] counts the tiered results among results[:k].
	tieredBefore := make([]int, len(results)+1)
	for k, r := range results {
		tieredBefore[k+1] = tieredBefore[k]
		if r.class == classTiered {
			tieredBefore[k+1]++
		}
	}
	tiered := tieredBefore[len(results)]
	for k := range results {
		r := &results[k]
		r.newer = tiered - tieredBefore[k+1]
		r.tier = p.tierOf(r.newer)
		switch r.class {
		case classTiered:
			st.Tiers[r.tier-1]++
		case classCompacted:
			st.Compacted++
		case classEmpty:
			st.Empty++
		case classExempt:
			st.Exempt++
		}
	}
	for k := range plan.calls {
		c := &plan.calls[k]
		if c.result >= 0 {
			c.tier = results[c.result].tier
		} else {
			c.tier = p.tierOf(tiered - tieredBefore[c.resultsBefore])
		}
	}

	// Cutting reads every output that is too long: in parallel too.
	parallel(len(results), func(i int) {
		p.truncateResult(partOf(&results[i]), &results[i])
	})
	for _, r := range results {
		if r.cut {
			st.Truncated++
			st.TruncatedByTier[r.tier-1]++
		}
		if r.headTail {
			st.HeadTail++
		}
	}
	return plan
}

func (p *Pipeline) classify(part sa.Part, name string) resultClass {
	switch {
	case part.Compacted || p.compacted.match(part.Output):
		return classCompacted
	case part.Output == "":
		return classEmpty
	case p.exempt(name):
		return classExempt
	}
	return classTiered
}

func (p *Pipeline) exempt(name string) bool {
	for _, t := range p.cfg.NoTruncateTools {
		if t == name {
			return true
		}
	}
	return false
}

// tierOf returns the tier (1, 2 or 3) of a result with newer tiered
// results after it.
func (p *Pipeline) tierOf(newer int) int {
	switch {
	case newer < p.cfg.Tier1Results:
		return 1
	case newer < p.cfg.Tier1Results+p.cfg.Tier2Results:
		return 2
	}
	return 3
}

// headTail reports whether a cut result keeps its tail too: output of a
// shell-like tool, or anything that looks like an error.
func (p *Pipeline) headTail(name string, part sa.Part) bool {
	if part.IsError {
		return true
	}
	lower := strings.ToLower(name)
	for _, t := range p.headTailTools {
		if strings.Contains(lower, t) {
			return true
		}
	}
	return p.errorPatterns.match(part.Output)
}

// truncateResult sets the content of a result as the digest shows it.
func (p *Pipeline) truncateResult(part sa.Part, r *toolResult) {
	switch r.class {
	case classCompacted:
		r.text = part.Output
		if r.text == "" {
			r.text = CompactedMarker
		}
		r.text = validUTF8(r.text)
		return
	case classEmpty:
		r.text = "(empty)"
		return
	}
	limit := p.resultChars[r.tier-1]
	out := part.Output
	if r.class == classExempt || limit < 0 || len(out) <= limit {
		r.text = validUTF8(out)
		return
	}
	total := charCount(out)
	if total <= limit {
		r.text = validUTF8(out)
		return
	}
	r.cut = true
	if p.headTail(r.name, part) {
		r.headTail = true
		r.text = cutHeadTail(out, limit, total, p.cfg.HeadRatio)
		return
	}
	r.text = cutHead(out, limit, total)
}
