package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"iter"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
)

// Forks of one parent launched together (a model's parallel tool calls)
// start with the same prompt: the agent's prompt and tools, then the
// same digest. A prompt cache makes an entry readable only once the
// answer of the request that writes it has begun (Anthropic's "Prompt
// caching" documentation), so siblings that send their first request at
// once each write the whole prefix. siblings lines them up instead: the
// first sends its request, and the others wait until its answer begins
// (its first event), at most siblingWait, and then read the prefix.
type siblings struct {
	mu      sync.Mutex
	writers map[string]*prefixWriter // prefix key → the request writing it
	// launched is when forks were launched, by launchKey of their whole
	// digest and of its first part: what the launch answer's estimate
	// takes as cached.
	launched map[string]time.Time
}

// prefixWriter is the first request of a prefix: begun is closed once its
// answer began, or it ended without one.
type prefixWriter struct {
	begun chan struct{}
	at    time.Time // when begun was closed
}

// siblingWait bounds a sibling's wait for the writer's answer to begin:
// past it, the sibling sends its request anyway (and writes the prefix).
const siblingWait = 30 * time.Second

// prefixLife is how long a written prefix stays in the cache unread
// (Anthropic's 5 minutes): a later request with the same key is told
// to wait for no one.
const prefixLife = 5 * time.Minute

// wrap returns p with the first requests of forks lined up.
func (s *siblings) wrap(p sa.Provider) sa.Provider { return gated{p, s} }

type gated struct {
	sa.Provider
	s *siblings
}

// Stream sends a fork's first request after its siblings' writer's answer
// began; every other request goes at once.
func (g gated) Stream(ctx context.Context, req sa.ModelRequest) iter.Seq2[sa.StreamEvent, error] {
	key, ok := firstForkRequest(req)
	if !ok {
		return g.Provider.Stream(ctx, req)
	}
	return func(yield func(sa.StreamEvent, error) bool) {
		w, writer := g.s.enter(key)
		if !writer {
			timer := time.NewTimer(siblingWait)
			select {
			case <-w.begun:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		began := !writer
		begin := func() {
			if !began {
				began = true
				g.s.begun(w)
			}
		}
		defer begin() // ended without an answer: nobody waits any more
		for ev, err := range g.Provider.Stream(ctx, req) {
			begin()
			if !yield(ev, err) {
				return
			}
		}
	}
}

// enter returns the writer of a prefix, and whether the caller is it (the
// first, or the first since the last one's entry expired).
func (s *siblings) enter(key string) (*prefixWriter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, w := range s.writers {
		if !w.at.IsZero() && now.Sub(w.at) > prefixLife {
			delete(s.writers, k)
		}
	}
	if w, ok := s.writers[key]; ok {
		return w, false
	}
	if s.writers == nil {
		s.writers = map[string]*prefixWriter{}
	}
	w := &prefixWriter{begun: make(chan struct{})}
	s.writers[key] = w
	return w, true
}

func (s *siblings) begun(w *prefixWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.at = time.Now()
	close(w.begun)
}

// firstForkRequest returns the key of a forked task's first request: one
// whose conversation opens with a system message (the digest, see
// forkContext) and has no answer yet. The key is everything the siblings'
// requests share: the model, the system prompt, the tools and the digest.
func firstForkRequest(req sa.ModelRequest) (string, bool) {
	var digest *sa.Message
	for i, m := range req.Messages {
		switch {
		case m.Kind == sa.KindClear || m.Kind == sa.KindFork || m.Kind == sa.KindCommand:
		case m.Role == sa.RoleAssistant:
			return "", false
		case digest == nil && m.Role == sa.RoleSystem:
			digest = &req.Messages[i]
		case digest == nil:
			return "", false
		}
	}
	if digest == nil {
		return "", false
	}
	h := sha256.New()
	tools, _ := json.Marshal(req.Tools)
	for _, s := range []string{req.Model, req.System, string(tools), digest.Text()} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil)), true
}

// launchKey names a fork's prompt at launch, before the run knows its
// system prompt and tools: the model, the agent and digest text.
func launchKey(model, agent, text string) string {
	h := sha256.Sum256([]byte(model + "\x00" + agent + "\x00" + text))
	return string(h[:])
}

// noteLaunch records a fork's launch and reports whether a fork with the
// same whole digest, or the same first part (its stable start), was
// launched within the cache's lifetime.
func (s *siblings) noteLaunch(whole, start string) (sameWhole, sameStart bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, at := range s.launched {
		if now.Sub(at) > prefixLife {
			delete(s.launched, k)
		}
	}
	if s.launched == nil {
		s.launched = map[string]time.Time{}
	}
	_, sameWhole = s.launched[whole]
	_, sameStart = s.launched["start:"+start]
	s.launched[whole], s.launched["start:"+start] = now, now
	return sameWhole, sameStart
}
