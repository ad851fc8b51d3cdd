package forkctx

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tokens"
)

// Config holds every threshold of the pipeline. DefaultConfig gives the
// values of the specification; a configuration file may override any of
// them (the toml tags name the keys).
type Config struct {
	// Tier1Results is how many of the newest tool results are kept whole.
	Tier1Results int `toml:"tier1_results" json:"tier1_results"`
	// Tier2Results is how many results after those are cut to Tier2Chars.
	// All older results are cut to Tier3Chars.
	Tier2Results int `toml:"tier2_results" json:"tier2_results"`
	// Tier2Chars and Tier3Chars are the characters a cut result keeps.
	Tier2Chars int `toml:"tier2_chars" json:"tier2_chars"`
	Tier3Chars int `toml:"tier3_chars" json:"tier3_chars"`
	// Tier1ParamChars, Tier2ParamChars and Tier3ParamChars cap the preview
	// of a tool call's parameters, by the tier of the call's result.
	Tier1ParamChars int `toml:"tier1_param_chars" json:"tier1_param_chars"`
	Tier2ParamChars int `toml:"tier2_param_chars" json:"tier2_param_chars"`
	Tier3ParamChars int `toml:"tier3_param_chars" json:"tier3_param_chars"`
	// HeadRatio is the share of a head+tail cut that goes to the head.
	HeadRatio float64 `toml:"head_ratio" json:"head_ratio"`
	// HeadTailTools: a result of a tool whose name contains one of these
	// (case-insensitively) keeps its head and its tail when cut, because
	// the end of a command's output (exit status, summary) matters.
	HeadTailTools []string `toml:"head_tail_tools" json:"head_tail_tools"`
	// ErrorPatterns: a result containing one of these (case-sensitively)
	// is cut head+tail too, so the error at its end survives.
	ErrorPatterns []string `toml:"error_patterns" json:"error_patterns"`
	// NoTruncateTools are tools whose results are never cut, and take no
	// tier slot (a user's answers are worth keeping whole).
	NoTruncateTools []string `toml:"no_truncate_tools" json:"no_truncate_tools"`
	// MaxChars: a formatted context longer than this loses its oldest
	// messages until it is at most TargetChars long (0, the default, means
	// MaxChars itself: it keeps as much as fits). A context of at most
	// MaxChars characters is left whole.
	MaxChars    int `toml:"max_chars" json:"max_chars"`
	TargetChars int `toml:"target_chars" json:"target_chars"`
	// DropStepChars: over MaxChars, the oldest messages go in steps of
	// this many characters, counted from the digest's start, so that
	// successive forks of a growing parent start at the same message (and
	// read their shared beginning from the prompt cache) until it has
	// grown by about a step. 0 drops only what the budget needs; a step
	// is at most a tenth of the target (see DropStep).
	DropStepChars int `toml:"drop_step_chars" json:"drop_step_chars"`
	// MaxTokens: a context of more tokens loses its oldest messages until it
	// has at most this many.
	MaxTokens int `toml:"max_tokens" json:"max_tokens"`
	// TokenEncoding names the tokenizer vocabulary (see package tokens).
	TokenEncoding string `toml:"token_encoding" json:"token_encoding"`
}

// DefaultConfig returns the thresholds of the specification.
func DefaultConfig() Config {
	return Config{
		Tier1Results:    5,
		Tier2Results:    10,
		Tier2Chars:      3000,
		Tier3Chars:      500,
		Tier1ParamChars: 500,
		Tier2ParamChars: 200,
		Tier3ParamChars: 100,
		HeadRatio:       0.8,
		HeadTailTools:   []string{"bash", "pty", "exec"},
		ErrorPatterns: []string{
			"error", "Error", "ERROR", "failed", "FAILED",
			"exception", "Exception", "traceback", "Traceback",
		},
		NoTruncateTools: []string{"ask_user_questions"},
		MaxChars:        200_000,
		DropStepChars:   20_000,
		MaxTokens:       100_000,
		TokenEncoding:   tokens.DefaultEncoding,
	}
}

// Target is the length a digest over MaxChars is trimmed to: TargetChars,
// or MaxChars when it is not set.
func (c Config) Target() int {
	if c.TargetChars > 0 {
		return c.TargetChars
	}
	return c.MaxChars
}

// DropStep is the step the oldest messages are dropped in: DropStepChars,
// at most a tenth of Target, so that it never costs a digest more than a
// tenth of its room.
func (c Config) DropStep() int {
	return min(c.DropStepChars, c.Target()/10)
}

// Validate reports every setting that makes no sense, all at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.Tier1Results < 0 {
		bad("tier1_results is %d: it cannot be negative", c.Tier1Results)
	}
	if c.Tier2Results < 0 {
		bad("tier2_results is %d: it cannot be negative", c.Tier2Results)
	}
	positive := []struct {
		key   string
		value int
	}{
		{"tier2_chars", c.Tier2Chars}, {"tier3_chars", c.Tier3Chars},
		{"tier1_param_chars", c.Tier1ParamChars}, {"tier2_param_chars", c.Tier2ParamChars},
		{"tier3_param_chars", c.Tier3ParamChars},
		{"max_chars", c.MaxChars}, {"max_tokens", c.MaxTokens},
	}
	for _, p := range positive {
		if p.value <= 0 {
			bad("%s is %d: it must be at least 1", p.key, p.value)
		}
	}
	if c.Tier3Chars > c.Tier2Chars && c.Tier2Chars > 0 {
		bad("tier3_chars (%d) is larger than tier2_chars (%d): older results cannot keep more than newer ones", c.Tier3Chars, c.Tier2Chars)
	}
	if c.Tier2ParamChars > c.Tier1ParamChars || c.Tier3ParamChars > c.Tier2ParamChars {
		bad("parameter previews must not grow with age: tier1_param_chars (%d) >= tier2_param_chars (%d) >= tier3_param_chars (%d)",
			c.Tier1ParamChars, c.Tier2ParamChars, c.Tier3ParamChars)
	}
	if !(c.HeadRatio > 0 && c.HeadRatio < 1) { // also rejects NaN
		bad("head_ratio is %v: it must be between 0 and 1, exclusive", c.HeadRatio)
	}
	if c.TargetChars < 0 {
		bad("target_chars is %d: it cannot be negative (0 means max_chars)", c.TargetChars)
	}
	if c.TargetChars > c.MaxChars && c.MaxChars > 0 {
		bad("target_chars (%d) is larger than max_chars (%d): trimming must end below the trigger", c.TargetChars, c.MaxChars)
	}
	if c.DropStepChars < 0 {
		bad("drop_step_chars is %d: it cannot be negative (0 drops only what the budget needs)", c.DropStepChars)
	}
	lists := []struct {
		key  string
		list []string
	}{
		{"head_tail_tools", c.HeadTailTools}, {"error_patterns", c.ErrorPatterns}, {"no_truncate_tools", c.NoTruncateTools},
	}
	for _, l := range lists {
		if slices.Contains(l.list, "") {
			bad("%s has an empty entry: it would match everything", l.key)
		}
	}
	if c.TokenEncoding != "" && !slices.Contains(tokens.Encodings(), c.TokenEncoding) {
		bad("token_encoding %q is unknown (want one of %s)", c.TokenEncoding, strings.Join(tokens.Encodings(), ", "))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: fork context configuration: %w", superagents.ErrInvalid, errors.Join(errs...))
	}
	return nil
}
