package superagents

import (
	"fmt"
	"math"
)

// Budget is what a task tree (a task and every task it launched, at any
// depth, resumes included) may spend before its task is stopped. A zero
// field is no limit.
type Budget struct {
	// MaxCost is in dollars, at the configured prices of the models.
	MaxCost float64 `json:"max_cost,omitempty"`
	// MaxTokens counts every token of the tree's model responses: input,
	// output, cache reads and cache writes (Usage.Total).
	MaxTokens int64 `json:"max_tokens,omitempty"`
}

// IsZero reports whether the budget sets no limit.
func (b Budget) IsZero() bool { return b == Budget{} }

// Validate refuses a negative or non-finite limit.
func (b Budget) Validate() error {
	if b.MaxCost < 0 || math.IsNaN(b.MaxCost) || math.IsInf(b.MaxCost, 0) {
		return fmt.Errorf("%w: a task's max_cost must be a positive number of dollars, not %v", ErrInvalid, b.MaxCost)
	}
	if b.MaxTokens < 0 {
		return fmt.Errorf("%w: a task's max_tokens cannot be negative (%d)", ErrInvalid, b.MaxTokens)
	}
	return nil
}

// Total is every token counted: input, output, cache reads and writes.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}
