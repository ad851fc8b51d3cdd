package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// FuzzDecodeBody: whatever a client sends, decoding a request body ends
// in the value or in a 4xx error that says what is wrong; never a panic
// or a 500.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"abcd","agent":"general","description":"d","prompt":"p","fork":true,"timeout":30}`,
		`{"fork":"yes"}`, `{"timeout":1e99}`, `{"x":1}`, `[]`, `{} {}`, `{`, ``, `null`, `"text"`,
		`{"prompt":"\u0000\ud800"}`, `{"resume":null}`,
	} {
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, optional bool) {
		req := httptest.NewRequest("POST", "/v1/tasks", bytes.NewReader(body))
		req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 512)
		var v launchRequest
		err := decodeBody(req, &v, optional)
		if err == nil {
			return
		}
		if status := statusOf(err); status < 400 || status >= 500 {
			t.Fatalf("decoding %q: status %d for %v", body, status, err)
		}
		if err.Error() == "" {
			t.Fatalf("decoding %q: an empty error", body)
		}
	})
}

// FuzzLastEventID: a Last-Event-ID is a change id or a 400, never a
// negative id.
func FuzzLastEventID(f *testing.F) {
	for _, seed := range []string{"", "0", "42", " 7 ", "-1", "1e3", "9223372036854775808", "abc"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id, ok, err := parseLastEventID(raw)
		switch {
		case err != nil:
			if statusOf(err) != http.StatusBadRequest {
				t.Fatalf("%q: status %d", raw, statusOf(err))
			}
		case ok:
			if back, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64); id < 0 || err != nil || back != id {
				t.Fatalf("%q parsed as %d", raw, id)
			}
		case strings.TrimSpace(raw) != "":
			t.Fatalf("%q was taken for no id", raw)
		}
	})
}

// FuzzEventFraming: whatever an event carries, it is framed as one event
// whose data decodes back to it (JSON keeps newlines out of the data
// line).
func FuzzEventFraming(f *testing.F) {
	for _, seed := range []string{"plain", "two\nlines", "\r\n\r\n", "data: fake\n\nevent: x", "\u2028\u2029", "\x00"} {
		f.Add(seed, int64(3))
	}
	f.Fuzz(func(t *testing.T, text string, id int64) {
		var out bytes.Buffer
		w := &eventWriter{out: bufio.NewWriter(&out)}
		w.event(id, "task.updated", map[string]string{"text": text})
		if err := w.out.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		var data, name string
		var gotID string
		blank := 0
		for i, line := range lines {
			if line == "" {
				if i < len(lines)-2 {
					t.Fatalf("a blank line inside the event: %q", out.String())
				}
				blank++
				continue
			}
			if strings.ContainsRune(line, '\r') {
				t.Fatalf("a carriage return inside a line: %q", line)
			}
			field, value, _ := strings.Cut(line, ": ")
			switch field {
			case "id":
				gotID = value
			case "event":
				name = value
			case "data":
				data = value
			default:
				t.Fatalf("unexpected line %q in %q", line, out.String())
			}
		}
		if blank != 2 || name != "task.updated" {
			t.Fatalf("framing of %q: %q", text, out.String())
		}
		if (id >= 0) != (gotID != "") || id >= 0 && gotID != strconv.FormatInt(id, 10) {
			t.Fatalf("id %d written as %q", id, gotID)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(data), &back); err != nil {
			t.Fatalf("data %q: %v", data, err)
		}
		if want := string([]rune(text)); back["text"] != want { // each invalid byte becomes U+FFFD
			t.Fatalf("data decodes to %q, want %q", back["text"], want)
		}
	})
}
