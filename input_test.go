package superagents_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	sa "github.com/superagents/superagents"
)

// TestFormRead: what a question takes, read from its stored request, and
// a text read as its value (the shapes are those tasks store: a command's
// boolean "allow", superagents_ask's "answer" with or without choices).
func TestFormRead(t *testing.T) {
	req := func(schema string) sa.InputRequest {
		return sa.InputRequest{Key: "k", Request: json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":` + schema + `}}`)}
	}
	command := req(`{"type":"object","properties":{"allow":{"type":"boolean"}}}`)
	choice := req(`{"type":"object","properties":{"answer":{"type":"string","enum":["red","blue"]}}}`)
	free := req(`{"type":"object","properties":{"answer":{"type":"string"}}}`)
	tests := []struct {
		name  string
		req   sa.InputRequest
		text  string
		want  any
		takes string
	}{
		{"yes", command, " Yes. ", true, "yes or no"},
		{"no", command, "deny", false, "yes or no"},
		{"neither", command, "perhaps", nil, "yes or no"},
		{"a choice, any case", choice, "BLUE", "blue", `one of "red", "blue"`},
		{"not a choice", choice, "green", nil, `one of "red", "blue"`},
		{"free text", free, " anything ", "anything", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form, err := tt.req.Form()
			if err != nil {
				t.Fatal(err)
			}
			if form.Takes() != tt.takes {
				t.Errorf("Takes = %q, want %q", form.Takes(), tt.takes)
			}
			got, err := form.Read(tt.text)
			if tt.want == nil {
				if !errors.Is(err, sa.ErrInvalid) {
					t.Fatalf("Read(%q) = %v, %v: want ErrInvalid", tt.text, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Read(%q) = %v, %v: want %v", tt.text, got, err, tt.want)
			}
		})
	}
	if f, _ := choice.Form(); f.Field != "answer" || !slices.Equal(f.Choices, []string{"red", "blue"}) {
		t.Errorf("the choice's form = %+v", f)
	}
	for _, bad := range []sa.InputRequest{{Key: "x", Request: json.RawMessage(`{`)}, req(`{"properties":{}}`)} {
		if _, err := bad.Form(); !errors.Is(err, sa.ErrCorrupt) {
			t.Errorf("Form of %s: %v, want ErrCorrupt", bad.Request, err)
		}
	}
}
