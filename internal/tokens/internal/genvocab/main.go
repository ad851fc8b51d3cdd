// Command genvocab writes the vocabularies the tokens package embeds, in
// its compact form, from the tiktoken files of
// github.com/pkoukk/tiktoken-go-loader (base64 tokens and their ranks, one
// a line). Run it with go generate in the tokens package.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pkoukk/tiktoken-go-loader/assets"

	"github.com/superagents/superagents/internal/tokens/internal/vocab"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genvocab:", err)
		os.Exit(1)
	}
}

// run converts each named encoding into dir/NAME.vocab: genvocab DIR NAME...
func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: genvocab DIR ENCODING [ENCODING]")
	}
	for _, name := range args[1:] {
		text, err := assets.Assets.ReadFile(name + ".tiktoken")
		if err != nil {
			return err
		}
		data, err := vocab.FromTiktoken(text)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(args[0], name+".vocab"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
