package llmtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
)

// The fake servers keep a prompt cache the way the real APIs report it,
// so tests and benchmarks can see what caching saves. Tokens are
// estimated as a quarter of the bytes of each piece of the prompt.
//
// Anthropic, each rule from the documentation's "Prompt caching" page
// (docs.anthropic.com, build-with-claude/prompt-caching):
//   - "How prompt caching works": the prompt is read in the order tools,
//     system, messages, and a block marked with cache_control caches the
//     prefix that ends with it;
//   - "Cache limitations": at most 4 breakpoints per request (invalid),
//     and no prefix shorter than the model's minimum is cached (1,024
//     tokens for Sonnet and Opus; CacheMinTokens);
//   - "Automatic prefix checking": at each breakpoint the API looks for
//     the longest cached prefix at that block or at most 20 blocks before
//     it (anthropicLookback);
//   - "Cache lifetime": an entry lives 5 minutes, refreshed each time it
//     is read (anthropicTTL; Clock lets a test move time);
//   - "Concurrent requests" (under "Caching with... / Tracking cache
//     performance" in recent versions): an entry becomes available only
//     once the response of the request that writes it has begun, so
//     parallel requests sent before that each write it again. A writer's
//     entries are published just before its first byte; WriteDelay holds
//     that first byte back, as a real model's prefill of a long prompt
//     does, so that requests sent meanwhile miss;
//   - "Tracking cache performance": usage.input_tokens counts only what
//     follows the last breakpoint, cache_creation_input_tokens what was
//     written and cache_read_input_tokens what was read; the three add up
//     to the prompt.
//
// OpenAI (docs: "Prompt caching"): caching is automatic; the longest
// prefix of an earlier request is read back, and usage.prompt_tokens
// counts the whole prompt with the cached part repeated in
// prompt_tokens_details.cached_tokens. Here the prefix is counted in
// whole pieces (the tool list, then each message) rather than the real
// API's 128-token steps.

// anthropicLookback is how many blocks before a mark the API looks for a
// cached prefix.
const anthropicLookback = 20

// anthropicTTL is how long an Anthropic cache entry lives unread.
const anthropicTTL = 5 * time.Minute

// promptCache is a server's set of cached prefixes.
type promptCache map[string]cacheEntry

// cacheEntry is one cached prefix: written by request writer (its
// sequence number), readable once that request's answer began, until
// expires (zero: never, as for OpenAI here).
type cacheEntry struct {
	writer   int
	readable bool
	expires  time.Time
}

// piece is one block of a prompt: its bytes without any cache mark.
type piece struct {
	tokens int
	marked bool
	prefix string // hash of the prompt up to and including this piece
}

// pieces cuts a request body into its blocks, in prompt order. For
// Anthropic a string system prompt or message content is one block.
func pieces(body []byte, anthropic bool) []piece {
	var req struct {
		Model    string            `json:"model"`
		Tools    []json.RawMessage `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var raw []json.RawMessage
	var roles []string
	add := func(role string, blocks ...json.RawMessage) {
		for _, b := range blocks {
			raw, roles = append(raw, b), append(roles, role)
		}
	}
	if !anthropic {
		tools, _ := json.Marshal(req.Tools)
		add("tools", tools)
		for _, m := range req.Messages {
			b, _ := json.Marshal(m)
			add("message", b)
		}
	} else {
		add("tool", req.Tools...)
		add("system", blocksOf(req.System)...)
		for _, m := range req.Messages {
			add(m.Role, blocksOf(m.Content)...)
		}
	}
	out := make([]piece, len(raw))
	h := sha256.New()
	h.Write([]byte(req.Model))
	for i, b := range raw {
		canonical, marked := unmarked(b)
		h.Write([]byte{0})
		h.Write([]byte(roles[i]))
		h.Write(canonical)
		out[i] = piece{tokens: len(canonical)/4 + 1, marked: marked, prefix: string(h.Sum(nil))}
	}
	return out
}

// blocksOf returns the blocks of a system prompt or message content, which
// may be a string or an array of blocks.
func blocksOf(v json.RawMessage) []json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(v, &blocks) == nil {
		return blocks
	}
	return []json.RawMessage{v}
}

// unmarked returns a block re-encoded without its cache_control (map keys
// sorted, so the bytes depend only on the content) and whether it had one.
func unmarked(b json.RawMessage) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b, false
	}
	_, marked := m["cache_control"]
	delete(m, "cache_control")
	out, err := json.Marshal(m)
	if err != nil {
		return b, marked
	}
	return out, marked
}

func sum(ps []piece) int {
	n := 0
	for _, p := range ps {
		n += p.tokens
	}
	return n
}

// anthropicUsage reads and writes the cache for one request and returns
// the input side of its usage. What it writes is readable only once
// published (see Server.started).
func (s *Server) anthropicUsage(req Request) Usage {
	ps := pieces(req.Body, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = promptCache{}
	}
	now := s.now()
	hit := func(p piece) bool {
		e, ok := s.cache[p.prefix]
		return ok && e.readable && now.Before(e.expires)
	}
	read, last := 0, 0 // pieces read from the cache; pieces up to the last mark
	for i, p := range ps {
		if !p.marked {
			continue
		}
		last = i + 1
		for j := i; j >= 0 && j > i-anthropicLookback; j-- {
			if hit(ps[j]) {
				read = max(read, j+1)
				break
			}
		}
	}
	if read > 0 { // a read refreshes the entry's lifetime
		e := s.cache[ps[read-1].prefix]
		e.expires = now.Add(anthropicTTL)
		s.cache[ps[read-1].prefix] = e
	}
	u := Usage{CacheReadTokens: sum(ps[:read])}
	written := read
	for i, p := range ps[:last] {
		if i < read || !p.marked || sum(ps[:i+1]) < s.CacheMinTokens {
			continue
		}
		written = i + 1
		if e, ok := s.cache[p.prefix]; !ok || !e.readable || !now.Before(e.expires) {
			s.cache[p.prefix] = cacheEntry{writer: req.seq, expires: now.Add(anthropicTTL)}
		}
	}
	u.CacheWriteTokens = sum(ps[read:written])
	u.InputTokens = sum(ps[written:])
	if written > read { // the delay is fixed now, under the lock that makes the write pending
		s.writers[req.seq] = s.WriteDelay
	}
	return u
}

// started publishes what a request wrote to the cache, its answer about
// to begin; a request that wrote waits WriteDelay first (the prefill).
func (s *Server) started(ctx context.Context, req Request) bool {
	s.mu.Lock()
	delay, wrote := s.writers[req.seq]
	s.mu.Unlock()
	if !wrote {
		return true
	}
	ok := delay <= 0 || s.wait(ctx, delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writers, req.seq)
	if !ok {
		return false // never answered: its entries stay unreadable
	}
	for k, e := range s.cache {
		if e.writer == req.seq && !e.readable {
			e.readable = true
			s.cache[k] = e
		}
	}
	return true
}

func (s *Server) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// openaiUsage reads the longest cached prefix of one request, caches all
// of its prefixes and returns the input side of its usage (InputTokens is
// the whole prompt, as prompt_tokens is).
func (s *Server) openaiUsage(req Request) Usage {
	ps := pieces(req.Body, false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = promptCache{}
	}
	read := 0
	for i, p := range ps {
		if _, ok := s.cache[p.prefix]; ok {
			read = i + 1
		}
	}
	u := Usage{InputTokens: sum(ps)}
	if n := sum(ps[:read]); n >= s.CacheMinTokens {
		u.CacheReadTokens = n
	}
	for i, p := range ps {
		if sum(ps[:i+1]) >= s.CacheMinTokens {
			s.cache[p.prefix] = cacheEntry{writer: req.seq, readable: true}
		}
	}
	return u
}

// anthropicMaxMarks is how many cache_control marks a request may carry.
const anthropicMaxMarks = 4

// invalid refuses a request with more cache marks than the API allows,
// with the API's message.
func (anthropicAPI) invalid(body []byte) string {
	marks := 0
	for _, p := range pieces(body, true) {
		if p.marked {
			marks++
		}
	}
	if marks > anthropicMaxMarks {
		return fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", anthropicMaxMarks, marks)
	}
	return ""
}
