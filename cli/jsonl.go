package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
)

// maxLineBytes bounds one JSONL line: big tool outputs fit, a runaway
// file does not exhaust memory.
const maxLineBytes = 64 << 20

// jsonlMessage is one line of the import/export format: a message with
// either a plain "text" or full "parts". Ids in the input are ignored (the
// store assigns new ones), so an export reads back as a copy.
type jsonlMessage struct {
	ID        int64     `json:"id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Role      sa.Role   `json:"role"`
	Kind      sa.Kind   `json:"kind,omitempty"`
	Text      *string   `json:"text,omitempty"`
	Parts     []sa.Part `json:"parts,omitempty"`
	Summary   bool      `json:"summary,omitempty"`
	Model     string    `json:"model,omitempty"`
	Usage     sa.Usage  `json:"usage,omitzero"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// ParseJSONL reads messages, one JSON object per line; blank lines are
// skipped. The first bad line stops it with an error naming the line, and
// nothing is returned, so a caller writes all or nothing.
func ParseJSONL(r io.Reader) ([]sa.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var out []sa.Message
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		msg, err := parseJSONLine(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, msg)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d is longer than %d MiB", sa.ErrInvalid, len(out)+1, maxLineBytes>>20)
		}
		return nil, fmt.Errorf("read input: %w", err)
	}
	return out, nil
}

func parseJSONLine(raw []byte) (sa.Message, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var in jsonlMessage
	if err := dec.Decode(&in); err != nil {
		return sa.Message{}, fmt.Errorf("%w: not a message object: %v", sa.ErrInvalid, err)
	}
	if dec.More() {
		return sa.Message{}, fmt.Errorf("%w: more than one JSON value on the line", sa.ErrInvalid)
	}
	if in.Role == "" {
		return sa.Message{}, fmt.Errorf("%w: missing \"role\"", sa.ErrInvalid)
	}
	msg := sa.Message{Role: in.Role, Kind: in.Kind, Parts: in.Parts, Summary: in.Summary, Model: in.Model,
		Usage: in.Usage, CreatedAt: in.CreatedAt}
	switch {
	case in.Text != nil && in.Parts != nil:
		return sa.Message{}, fmt.Errorf("%w: give \"text\" or \"parts\", not both", sa.ErrInvalid)
	case in.Text != nil:
		if *in.Text == "" {
			return sa.Message{}, fmt.Errorf("%w: empty \"text\"", sa.ErrInvalid)
		}
		msg.Parts = []sa.Part{sa.TextPart(*in.Text)}
	}
	if err := msg.Validate(); err != nil {
		return sa.Message{}, err
	}
	return msg, nil
}

// writeJSONL writes messages in the format ParseJSONL reads.
//
// For a long history the encoding is most of the work of the command that
// prints it, so chunks of messages are encoded on all cores, a bounded
// number ahead of the writer, and written in order.
func writeJSONL(w io.Writer, msgs []sa.Message) error {
	const chunk = 256
	chunks := (len(msgs) + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		for i := 0; i < len(msgs); i += chunk {
			b, err := encodeJSONL(msgs[i:min(i+chunk, len(msgs))])
			if err == nil {
				_, err = w.Write(b)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	type encoded struct {
		b   []byte
		err error
	}
	results := make([]chan encoded, chunks)
	for i := range results {
		results[i] = make(chan encoded, 1) // an encoder never waits for the writer
	}
	ahead := make(chan struct{}, 2*workers) // chunks started and not yet written
	stop := make(chan struct{})             // no more chunks: the output failed
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range chunks {
			select {
			case ahead <- struct{}{}:
			case <-stop:
				return
			}
			wg.Go(func() {
				b, err := encodeJSONL(msgs[i*chunk : min((i+1)*chunk, len(msgs))])
				results[i] <- encoded{b, err}
			})
		}
	})
	var err error
	for _, r := range results {
		e := <-r
		<-ahead
		if err = e.err; err == nil {
			_, err = w.Write(e.b)
		}
		if err != nil {
			break // a closed pipe: the rest is not encoded
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// encodeJSONL encodes messages as JSONL lines.
func encodeJSONL(msgs []sa.Message) ([]byte, error) {
	// Sized from the texts at once: growing a buffer of megabytes step by
	// step copies it again at every step. The margin covers escapes.
	size := 0
	for _, m := range msgs {
		size += 200
		for _, p := range m.Parts {
			size += 64 + len(p.Text) + len(p.Output) + len(p.Input) + len(p.Signature)
		}
	}
	var buf bytes.Buffer
	buf.Grow(size + size/8)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return nil, fmt.Errorf("write message %d: %w", m.ID, err)
		}
	}
	return buf.Bytes(), nil
}

// writeJSON writes one value as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
