package config

import "math"

// validateBudget checks the task tree budget.
func (c Config) validateBudget() []error {
	var errs []error
	if v := c.Tasks.MaxCost; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		errs = append(errs, &Error{Key: "tasks.max_cost", Msg: "must be a number of dollars, 0 or more (0: no limit)"})
	}
	if c.Tasks.MaxTokens < 0 {
		errs = append(errs, &Error{Key: "tasks.max_tokens", Msg: "must not be negative (0: no limit)"})
	}
	return errs
}
