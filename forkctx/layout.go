package forkctx

// chunkChars is the size of the chunks the stable start of a digest is
// cut into: a twentieth of the target, at most 10,000 characters. A later
// fork's stable start is longer (messages age into tier 3), so it must
// contain the earlier fork's end as a chunk boundary for a prompt cache to
// read that much back; Anthropic looks for a cached prefix at most 20
// blocks before a breakpoint, so with 20 chunks to a digest it finds one
// across a whole digest's growth.
func (c Config) chunkChars() int {
	return max(1, min(10_000, c.Target()/20))
}

// stableBounds returns the byte offsets, in the joined digest, where the
// chunks of its stable start end. The stable start is the blocks before
// the first one that shows a tool call or result of tier 1 or 2 (its text
// changes as the parent adds results) and before the newest (which a
// budget may cut): what every later fork of the same parent formats the
// same way, as long as the digest starts at the same message (see
// budget.trimChars). A chunk ends at the first block whose end passes a
// multiple of size counted from the digest's start, so the bounds depend
// only on what comes before them.
func (b *budget) stableBounds(size int) []int {
	var bounds []int
	offset, chars, written, chunk := 0, 0, 0, 0
	for i := range b.blocks {
		blk := &b.blocks[i]
		if blk.removed {
			continue
		}
		written++
		if blk.fresh || written == b.alive {
			break
		}
		if written > 1 {
			offset += len(messageSeparator)
			chars += messageSeparatorChars
		}
		offset += len(blk.text)
		chars += blk.chars
		if chars/size > chunk {
			chunk = chars / size
			bounds = append(bounds, offset)
		}
	}
	return bounds
}
