package forkctx

import (
	"strings"

	"github.com/superagents/superagents/internal/tokens"
)

// budget drops blocks in removal order and, as a last resort, cuts the
// newest one. Sizes are kept per block, so each removal costs O(1).
type budget struct {
	blocks    []block
	order     []int // indexes of blocks in the order they are given up
	next      int   // order[:next] are removed
	alive     int
	headRatio float64
	newestCut bool
}

// removalOrder gives blocks up oldest first, except that the compaction
// summary goes only after everything else, and the newest block never
// (it is cut instead, see budget.cutNewest).
func removalOrder(blocks []block) []int {
	if len(blocks) < 2 {
		return nil
	}
	order := make([]int, 0, len(blocks)-1)
	first := 0
	if blocks[0].summary {
		first = 1
	}
	for i := first; i < len(blocks)-1; i++ {
		order = append(order, i)
	}
	if first == 1 {
		order = append(order, 0)
	}
	return order
}

// total sums size over the blocks still there, with a separator between
// each two.
func (b *budget) total(size func(*block) int, separator int) int {
	n := 0
	for i := range b.blocks {
		if !b.blocks[i].removed {
			n += size(&b.blocks[i])
		}
	}
	if b.alive > 1 {
		n += separator * (b.alive - 1)
	}
	return n
}

// join returns the digest: the blocks still there, oldest first, with a
// separator between each two.
func (b *budget) join() string {
	var out strings.Builder
	out.Grow(b.total(func(b *block) int { return len(b.text) }, len(messageSeparator)))
	written := 0
	for i := range b.blocks {
		if b.blocks[i].removed {
			continue
		}
		if written > 0 {
			out.WriteString(messageSeparator)
		}
		out.WriteString(b.blocks[i].text)
		written++
	}
	return out.String()
}

// messages counts the history messages the blocks still there stand for.
func (b *budget) messages() int {
	n := 0
	for i := range b.blocks {
		if !b.blocks[i].removed {
			n += b.blocks[i].messages
		}
	}
	return n
}

// trim removes blocks in order until total is at most limit, and returns
// the new total and how many history messages went.
func (b *budget) trim(total, limit int, size func(*block) int, separator int) (newTotal, removed int) {
	for total > limit && b.next < len(b.order) {
		total, removed = b.drop(total, size, separator, removed)
	}
	return total, removed
}

// drop removes the next block in order from total, and counts its
// messages in removed.
func (b *budget) drop(total int, size func(*block) int, separator, removed int) (int, int) {
	blk := &b.blocks[b.order[b.next]]
	b.next++
	blk.removed = true
	total -= size(blk)
	if b.alive > 1 {
		total -= separator
	}
	b.alive--
	return total, removed + blk.messages
}

// newest returns the newest block, the one never removed.
func (b *budget) newest() *block { return &b.blocks[len(b.blocks)-1] }

// trimChars brings a total of chars down to at most target characters,
// and then on to a whole number of steps of characters removed: what goes
// is counted from the start, over the oldest (tier 3) messages, which
// format the same in every later fork, so a later fork of a parent grown
// by less than what the step left spare drops the very same messages.
func (b *budget) trimChars(chars, target, step int) (removed int) {
	size := func(blk *block) int { return blk.chars }
	before := chars
	chars, removed = b.trim(chars, target, size, messageSeparatorChars)
	if step > 0 && removed > 0 {
		goal := (before - chars + step - 1) / step * step
		for before-chars < goal && b.next < len(b.order) && !b.blocks[b.order[b.next]].summary {
			chars, removed = b.drop(chars, size, messageSeparatorChars, removed)
		}
	}
	if chars > target && b.alive == 1 {
		blk := b.newest()
		blk.text = fitHeadTail(blk.text, blk.chars, target, b.headRatio)
		blk.chars = charCount(blk.text)
		b.newestCut = true
	}
	return removed
}

// capTokens counts the tokens of each block left (once each) and brings
// their total down to at most maxTokens. The total of a joined digest is
// estimated as the blocks' counts plus one token per separator.
func (b *budget) capTokens(counter *tokens.Counter, maxTokens int) (total, removed int) {
	// Tokenizing is the costliest step per character: in parallel.
	parallel(len(b.blocks), func(i int) {
		if !b.blocks[i].removed {
			b.blocks[i].tokens = counter.Count(b.blocks[i].text)
		}
	})
	size := func(blk *block) int { return blk.tokens }
	total = b.total(size, messageSeparatorTok)
	if total <= maxTokens {
		return total, 0
	}
	total, removed = b.trim(total, maxTokens, size, messageSeparatorTok)
	if total > maxTokens && b.alive == 1 {
		blk := b.newest()
		for blk.tokens > maxTokens {
			// Shrink in proportion, a little more than needed, so this
			// converges in a few rounds; every round cuts at least one
			// character and no text of zero characters has a token.
			limit := min(blk.chars-1, int(float64(blk.chars)*float64(maxTokens)/float64(blk.tokens)*0.95))
			blk.text = fitHeadTail(blk.text, blk.chars, max(limit, 0), b.headRatio)
			blk.chars = charCount(blk.text)
			blk.tokens = counter.Count(blk.text)
		}
		b.newestCut = true
		total = blk.tokens
	}
	return total, removed
}
