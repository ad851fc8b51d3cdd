package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
)

func jsonlMessages(n int) []sa.Message {
	msgs := make([]sa.Message, n)
	for i := range msgs {
		msgs[i] = sa.Message{ID: int64(i + 1), Role: sa.RoleUser,
			Parts: []sa.Part{sa.TextPart(fmt.Sprintf("message %d, \"quoted\" <tag> é", i))}}
	}
	return msgs
}

// TestWriteJSONLKeepsTheOrder: the chunks encoded at once are written as
// one encoder would write the messages, whatever their number.
func TestWriteJSONLKeepsTheOrder(t *testing.T) {
	msgs := jsonlMessages(1000)
	for _, n := range []int{0, 1, 255, 256, 257, 1000} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		for _, m := range msgs[:n] {
			if err := enc.Encode(m); err != nil {
				t.Fatal(err)
			}
		}
		var got bytes.Buffer
		if err := writeJSONL(&got, msgs[:n]); err != nil {
			t.Fatalf("%d messages: %v", n, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d messages: the output differs from one encoder's", n)
		}
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.writes++; w.writes > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteJSONLErrors: a message that cannot be encoded, or a writer that
// fails, ends the output with its error, and no encoder is left behind.
func TestWriteJSONLErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	msgs := jsonlMessages(2000)
	msgs[700].Parts = []sa.Part{{Type: sa.PartToolCall, CallID: "c", Name: "read", Input: json.RawMessage(`{not json`)}}
	if err := writeJSONL(io.Discard, msgs); err == nil || !strings.Contains(err.Error(), "message 701") {
		t.Errorf("a message that cannot be encoded: %v", err)
	}
	if err := writeJSONL(&failingWriter{}, jsonlMessages(2000)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a failing writer: %v", err)
	}
}

// TestWriteJSONLOnOneCore: with one core the chunks are encoded one after
// the other, with the same output.
func TestWriteJSONLOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	msgs := jsonlMessages(600)
	var one, all bytes.Buffer
	if err := writeJSONL(&one, msgs); err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	if err := writeJSONL(&all, msgs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), all.Bytes()) || strings.Count(one.String(), "\n") != 600 {
		t.Fatal("the output on one core differs")
	}
}

// TestWriteJSONLFromAProducer: chunks handed over as they are read are
// written in order; a producer's error comes back after what it handed
// over was written; an output that fails stops the producer at its next
// chunk, and no encoder is left behind.
func TestWriteJSONLFromAProducer(t *testing.T) {
	defer goleak.VerifyNone(t)
	msgs := jsonlMessages(1000)
	var want bytes.Buffer
	if err := writeJSONL(&want, msgs[:600]); err != nil {
		t.Fatal(err)
	}
	readFailed := errors.New("read failed")
	var got bytes.Buffer
	err := writeJSONLFrom(&got, func(emit func([]sa.Message) error) error {
		for i := 0; i < 600; i += 100 {
			if err := emit(msgs[i : i+100]); err != nil {
				return err
			}
		}
		return readFailed
	})
	if !errors.Is(err, readFailed) {
		t.Errorf("a producer's error: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("what the producer handed over before its error was not written in order")
	}

	emitted, stopped := 0, 0
	err = writeJSONLFrom(&failingWriter{}, func(emit func([]sa.Message) error) error {
		for i := range 1000 {
			if err := emit(msgs[i : i+1]); err != nil {
				stopped++
				return err
			}
			emitted++
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a failing output: %v", err)
	}
	if stopped != 1 || emitted == 1000 {
		t.Errorf("the producer handed over %d chunks and was stopped %d times, want it stopped before the end", emitted, stopped)
	}
}
