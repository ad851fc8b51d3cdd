package forkctx_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Build fans work out to goroutines; none may outlive it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
