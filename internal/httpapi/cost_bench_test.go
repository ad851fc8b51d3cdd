package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	sa "github.com/superagents/superagents"
)

// BenchmarkListSessions: one client lists sessions, with what each cost,
// 50 and 200 to a page, with 1,000 sessions stored: each has 20 priced
// responses, and every tenth launched three tasks of 20 responses each.
func BenchmarkListSessions(b *testing.B) {
	h := newHarness(b)
	ctx := context.Background()
	msgs := make([]sa.Message, 20)
	for i := range msgs {
		msgs[i] = sa.Message{Role: sa.RoleAssistant, Model: "anthropic/claude-test", Parts: []sa.Part{sa.TextPart("a step")},
			Usage: sa.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 5000}}
	}
	for i := range 1000 {
		s, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: msgs})
		if err != nil {
			b.Fatal(err)
		}
		if i%10 != 0 {
			continue
		}
		for range 3 {
			_, err := h.store.CreateTask(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: s.ID, Description: "d", Agent: "general", Status: sa.TaskCompleted},
				Session: sa.NewSession{Agent: "general", Messages: msgs}})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, limit := range []int{50, 200} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/sessions?limit=%d", h.url, limit), nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("GET /v1/sessions = %d", res.StatusCode)
				}
			}
		})
	}
}
