package forkctx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// scriptHistory turns fuzz bytes into a valid history: each byte picks the
// next message and how much of text it carries, so the fuzzer explores
// orders of calls, results, boundaries and odd text (text may be invalid
// UTF-8).
func scriptHistory(script []byte, text string) []sa.Message {
	var h []sa.Message
	var calls []string
	piece := func(b byte) string {
		if b&1 == 0 {
			return text[:min(len(text), int(b))]
		}
		return strings.Repeat(text, int(b%8))
	}
	names := []string{"read", "bash", "ask_user_questions", "remote_exec", text}
	for i, b := range script {
		id := fmt.Sprintf("c%d", i)
		switch b % 10 {
		case 0:
			h = append(h, user(piece(b)))
		case 1:
			h = append(h, agent(piece(b)))
		case 2:
			name := names[int(b/10)%len(names)]
			if name == "" {
				name = "read"
			}
			input, _ := json.Marshal(map[string]string{"q": piece(b)})
			m := agentCalls(piece(b/3), call(id, name, string(input)))
			m.Parts = append([]sa.Part{{Type: sa.PartReasoning, Text: piece(b)}}, m.Parts...)
			h = append(h, m)
			calls = append(calls, id)
		case 3, 4:
			target := "orphan"
			if len(calls) > 0 {
				target = calls[int(b)%len(calls)]
			}
			r := result(target, "", piece(b))
			r.IsError = b%7 == 0
			h = append(h, toolMsg(r))
		case 5:
			h = append(h, compactionMarker())
		case 6:
			h = append(h, summary(piece(b)))
		case 7:
			h = append(h, sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{
				sa.TextPart(piece(b)), {Type: sa.PartText, Text: piece(b / 2), Hidden: true},
			}})
		case 8:
			r := result(id, "read", piece(b)+forkctx.CompactedMarker)
			r.Compacted = b%3 == 0
			h = append(h, toolMsg(r))
		case 9:
			h = append(h, sa.Message{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart(piece(b))}})
		}
	}
	return withIDs(h)
}

// FuzzBuild runs the pipeline on generated histories with small limits:
// it never fails or panics on a valid history, and the output is valid
// UTF-8 within the budgets (checkInvariants).
func FuzzBuild(f *testing.F) {
	f.Add([]byte{0, 2, 3, 1, 5, 6, 0, 12, 13, 22, 23}, "hello wörld", uint16(300), uint8(2))
	f.Add([]byte{2, 3, 2, 3, 2, 3, 2, 3, 32, 43, 52, 53, 9, 7}, "Error: \xff\xfe broken", uint16(120), uint8(1))
	f.Add([]byte{5, 6, 5, 0, 5, 6, 1, 8, 18, 28}, "😀 emoji 😀", uint16(50), uint8(0))
	f.Add([]byte{41, 41, 41, 41, 41, 41, 41, 41}, strings.Repeat("long text ", 50), uint16(2000), uint8(5))
	f.Fuzz(func(t *testing.T, script []byte, text string, budget uint16, tier1 uint8) {
		if len(script) > 100 || len(text) > 500 {
			return // larger inputs only slow the search down
		}
		cfg := forkctx.DefaultConfig()
		cfg.Tier1Results, cfg.Tier2Results = int(tier1%6), 3
		cfg.Tier2Chars, cfg.Tier3Chars = 60, 20
		cfg.Tier1ParamChars, cfg.Tier2ParamChars, cfg.Tier3ParamChars = 40, 20, 10
		cfg.MaxChars = int(budget%4000) + 1
		cfg.TargetChars = cfg.MaxChars/2 + 1
		cfg.MaxTokens = max(int(budget)/3, 1)
		res, err := newPipeline(t, cfg).Build(scriptHistory(script, text))
		if err != nil {
			t.Fatalf("Build of a valid history failed: %v", err)
		}
		checkInvariants(t, cfg, res)
		if preview := forkctx.Preview(res); !strings.Contains(preview, res.Digest) {
			t.Fatal("the preview lacks the digest")
		}
	})
}

// FuzzBuildJSON feeds the pipeline histories decoded from arbitrary JSON,
// as a store or an API would hand them over: bad ones are refused with
// ErrInvalid, never with a panic.
func FuzzBuildJSON(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","text":"hi"}]}]`))
	f.Add([]byte(`[{"role":"assistant","parts":[{"type":"tool_call","call_id":"a","name":"bash","input":{"c":1}}]},{"role":"tool","parts":[{"type":"tool_result","call_id":"a","output":"FAILED"}]}]`))
	f.Add([]byte(`[{"role":"user","parts":[{"type":"compaction"}]},{"role":"assistant","summary":true,"parts":[{"type":"text","text":"s"}]}]`))
	f.Add([]byte(`[{"role":"robot","parts":[]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var history []sa.Message
		if json.Unmarshal(data, &history) != nil {
			return
		}
		cfg := forkctx.DefaultConfig()
		cfg.MaxChars, cfg.TargetChars, cfg.MaxTokens = 500, 300, 200
		res, err := newPipeline(t, cfg).Build(history)
		if err != nil {
			if !errors.Is(err, sa.ErrInvalid) {
				t.Fatalf("Build refused a history without ErrInvalid: %v", err)
			}
			return
		}
		checkInvariants(t, cfg, res)
	})
}
