package repl

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The tokenizer's regexp engine (regexp2) keeps a clock
	// goroutine for a while after use; it is not ours.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}
