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
	// The lines are read first, then decoded on every core, each worker
	// a stretch of lines of about the same size; the messages keep the
	// lines' order, and the error reported is the one a reading line by
	// line would meet first.
	type line struct {
		no  int
		raw []byte
	}
	var (
		lines []line
		size  int
	)
	for no := 1; sc.Scan(); no++ {
		if raw := bytes.TrimSpace(sc.Bytes()); len(raw) > 0 {
			lines = append(lines, line{no, bytes.Clone(raw)})
			size += len(raw)
		}
	}
	out := make([]sa.Message, len(lines))
	errs := make([]error, len(lines))
	workers := min(runtime.GOMAXPROCS(0), max(1, size>>20))
	var wg sync.WaitGroup
	for w, start := 0, 0; w < workers; w++ {
		// The stretch of this worker ends where its share of the bytes does.
		end, share := start, size/workers
		for n := 0; end < len(lines) && (n < share || w == workers-1); end++ {
			n += len(lines[end].raw)
		}
		from, to := start, end
		wg.Go(func() {
			for i := from; i < to; i++ {
				out[i], errs[i] = parseJSONLine(lines[i].raw)
				if errs[i] != nil {
					return // the lines after it are not reported
				}
			}
		})
		start = end
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lines[i].no, err)
		}
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

// jsonlChunk is how many messages are encoded at once.
const jsonlChunk = 256

// writeJSONL writes messages in the format ParseJSONL reads.
func writeJSONL(w io.Writer, msgs []sa.Message) error {
	return writeJSONLFrom(w, func(emit func([]sa.Message) error) error {
		for i := 0; i < len(msgs); i += jsonlChunk {
			if err := emit(msgs[i:min(i+jsonlChunk, len(msgs))]); err != nil {
				return err
			}
		}
		return nil
	})
}

// errOutputFailed tells a producer of chunks that the output failed, so
// that it stops.
var errOutputFailed = errors.New("the output failed")

// writeJSONLFrom writes, in the format ParseJSONL reads, the chunks of
// messages that produce hands to emit, in order, while produce runs on a
// goroutine of its own: a history is written out while the rest of it is
// read.
//
// For a long history the encoding is most of the work of the command that
// prints it, so the chunks are encoded on all cores, a bounded number
// ahead of the writer, and written in order. When the output fails, emit
// returns an error, and the output's error is returned.
func writeJSONLFrom(w io.Writer, produce func(emit func([]sa.Message) error) error) error {
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 {
		return produce(func(msgs []sa.Message) error {
			b, err := encodeJSONL(msgs)
			if err == nil {
				_, err = w.Write(b)
			}
			return err
		})
	}
	type encoded struct {
		b   []byte
		err error
	}
	// The chunks being encoded, in order: its capacity bounds them.
	queue := make(chan chan encoded, 2*workers)
	stop := make(chan struct{}) // closed when the output failed
	var produced error
	go func() {
		defer close(queue)
		produced = produce(func(msgs []sa.Message) error {
			r := make(chan encoded, 1) // an encoder never waits for the writer
			select {
			case queue <- r:
			case <-stop:
				return errOutputFailed
			}
			go func() {
				b, err := encodeJSONL(msgs)
				r <- encoded{b, err}
			}()
			return nil
		})
	}()
	var err error
	for r := range queue {
		e := <-r
		if err != nil {
			continue // draining: the producer stops at its next chunk
		}
		if err = e.err; err == nil {
			_, err = w.Write(e.b)
		}
		if err != nil {
			close(stop) // a closed pipe: the rest is not encoded
		}
	}
	if err != nil {
		return err
	}
	return produced
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
