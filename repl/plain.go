package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxLine is the longest line RunPlain reads.
const maxLine = 1 << 20

// ErrInterrupted: the chat was stopped from outside (its context ended).
var ErrInterrupted = errors.New("interrupted")

// RunPlain runs the chat on lines read from in and prints a plain-text
// transcript to out, without escape codes, for scripts: the header of the
// agent in view, then for every line "> " and the line, then what it did.
// A message waits for the agent's answer before the next line is read.
// It returns an error when a line failed; the transcript says why.
func RunPlain(ctx context.Context, c *Chat, in io.Reader, out io.Writer) error {
	var (
		mu       sync.Mutex // the transcript is written from turns too
		w        = &writer{out: out, style: plainStyle{}}
		failures int
	)
	c.SetSink(func(e TurnEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case TurnText:
			w.text(e.Text)
		case TurnTool, TurnToolFailed:
			w.toolLine(e.Text)
		case TurnEnd:
			w.end(e)
			if e.Err != nil {
				failures++
			}
		}
	})
	mu.Lock()
	for _, b := range c.Opening(ctx) {
		w.block(b)
	}
	mu.Unlock()

	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	lines, readErr := readLines(readCtx, in)
	for line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		mu.Lock()
		w.block(Block{Kind: BlockUser, Text: strings.TrimSpace(line)})
		reply := c.Submit(ctx, line)
		for _, b := range reply.Blocks {
			w.block(b)
		}
		if reply.Failed {
			failures++
		}
		mu.Unlock()
		if t := reply.Turn(); t != nil {
			<-t.Start()
		}
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		if reply.Quit {
			break
		}
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err := readErr(); err != nil {
		return fmt.Errorf("read the chat's input: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if failures > 0 {
		return fmt.Errorf("%s of the chat failed (the transcript says why)", plural(failures, "line"))
	}
	return nil
}

// readLines reads lines in the background, so that a chat waiting for
// input still notices its context ending. The returned function reports
// the read error once the channel is closed (or ctx ended).
func readLines(ctx context.Context, in io.Reader) (<-chan string, func() error) {
	lines := make(chan string)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64*1024), maxLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		err = sc.Err()
	}()
	return lines, func() error {
		select {
		case <-done:
			return err
		default:
			return nil // stopped early: what is left unread does not matter
		}
	}
}
