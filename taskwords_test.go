package superagents_test

import (
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "0s", 12 * time.Second: "12s", 59*time.Second + 600*time.Millisecond: "1m 0s",
		125 * time.Second: "2m 5s", 3723 * time.Second: "1h 2m",
	} {
		if got := sa.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
