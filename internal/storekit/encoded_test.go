package storekit_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// TestEncodedMessageIsMarshal checks that a message with its parts encoded
// apart marshals to the bytes of the message marshaled whole, with its
// parts last.
func TestEncodedMessageIsMarshal(t *testing.T) {
	msgs := []sa.Message{
		{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(`a <b> & "c" \ é`)}},
		{ID: 7, SessionID: "s1", Role: sa.RoleAssistant, Kind: sa.KindNotification, Summary: true, Model: `m"parts":null`,
			Usage:     sa.Usage{InputTokens: 3, OutputTokens: 4},
			CreatedAt: time.Unix(0, 1788443295391000001).UTC(),
			Parts: []sa.Part{{Type: sa.PartToolCall, CallID: "c", Name: "read", Input: json.RawMessage(`{"path":"<x>"}`)},
				{Type: sa.PartToolResult, CallID: "c", Output: ",\"parts\":null", IsError: true}}},
		{Role: sa.RoleUser, Kind: sa.KindClear},
	}
	type plain sa.Message
	for _, m := range msgs {
		parts, err := json.Marshal(m.Parts)
		if err != nil {
			t.Fatal(err)
		}
		p := plain(m)
		p.Parts = nil
		want, err := json.Marshal(struct {
			plain
			Parts json.RawMessage `json:"parts"`
		}{p, parts})
		if err != nil {
			t.Fatal(err)
		}
		enc := storekit.EncodedMessage{Message: m, Parts: parts}
		got, err := enc.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("MarshalJSON:\n got %s\nwant %s", got, want)
		}
		if viaMarshal, _ := json.Marshal(enc); !bytes.Equal(viaMarshal, want) {
			t.Errorf("json.Marshal:\n got %s\nwant %s", viaMarshal, want)
		}
	}
}
