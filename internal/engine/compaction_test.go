package engine_test

import (
	"context"
	"testing"

	"github.com/superagents/superagents/internal/engine"
)

// Every loop the engine builds (chat turns and background tasks alike)
// compacts automatically when its model's window is known and compaction
// is on.
func TestLoopCompaction(t *testing.T) {
	tests := []struct {
		name, config, model string
		window              int // 0: no automatic compaction
		limit               int
	}{
		{"known model", "", "anthropic/claude-sonnet-4-5", 200_000, 160_000},
		{"configured window and share", "[models.\"ollama/qwen3\"]\ncontext_window = 32000\n[compaction]\nthreshold = 0.5\n", "ollama/qwen3", 32_000, 16_000},
		{"unknown window", "", "ollama/qwen3", 0, 0},
		{"turned off", "[compaction]\nauto = false\n", "anthropic/claude-sonnet-4-5", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, _ := newEngine(t, tt.config, map[string]string{"ANTHROPIC_API_KEY": "k"})
			loop, err := eng.Loop(context.Background(), newSession(t, eng, "", tt.model), engine.TurnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.window == 0 && loop.Compaction != nil:
				t.Fatalf("compaction %+v, want none", *loop.Compaction)
			case tt.window != 0 && (loop.Compaction == nil || loop.Compaction.Window != tt.window || loop.Compaction.Limit() != tt.limit):
				t.Fatalf("compaction %+v, want a window of %d compacting past %d", loop.Compaction, tt.window, tt.limit)
			}
		})
	}
}
