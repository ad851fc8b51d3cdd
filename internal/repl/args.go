package repl

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The task commands take options and words first, then a text (a prompt)
// that is either the rest of the line as typed or one quoted string:
//
//	/task --fork --desc "find the port" explore where is the port set?
//	/task explore "where is the port set?"
//
// A double-quoted string may hold \" and \\; a single-quoted one is taken
// as it is. Quotes inside an unquoted prompt are kept as typed, so
// "what's up" needs no escaping.

// commandArgs is what a command was given.
type commandArgs struct {
	options map[string]string // option name → value ("" for a switch)
	words   []string
	text    string
}

// textArg says whether a text ends a command's line.
type textArg int

const (
	noText textArg = iota
	optionalText
	requiredText
)

// argSyntax says what a command takes: which options (and whether each
// takes a value), how many words, and whether a text ends the line.
type argSyntax struct {
	command string
	usage   string
	options map[string]bool // name → takes a value
	aliases map[string]string
	words   int
	text    textArg
}

// parse reads a command's arguments. Errors are one line and show the
// usage.
func (s argSyntax) parse(line string) (commandArgs, error) {
	args := commandArgs{options: map[string]string{}}
	rest := strings.TrimSpace(line)
	for len(args.words) < s.words {
		word, quoted, after, err := nextWord(rest)
		if err != nil {
			return args, s.errorf("%v", err)
		}
		if word == "" && !quoted {
			return args, s.errorf("missing %s", s.missing(len(args.words)))
		}
		if !quoted && strings.HasPrefix(word, "--") {
			if after, err = s.option(args.options, word, after); err != nil {
				return args, err
			}
			rest = after
			continue
		}
		args.words = append(args.words, word)
		rest = after
	}
	rest = strings.TrimSpace(rest)
	switch {
	case s.text == noText && rest != "":
		return args, s.errorf("unexpected %q", echo(rest))
	case s.text == noText, s.text == optionalText && rest == "":
		return args, nil
	case rest == "":
		return args, s.errorf("missing %s", s.missing(s.words))
	case strings.HasPrefix(rest, "--") && len(s.options) > 0:
		return args, s.errorf("options go before %s", s.missing(0))
	}
	text, err := restText(rest)
	if err != nil {
		return args, s.errorf("%v", err)
	}
	if strings.TrimSpace(text) == "" {
		return args, s.errorf("the quoted text is empty")
	}
	args.text = text
	return args, nil
}

// option reads one --name, --name=value or --name value.
func (s argSyntax) option(into map[string]string, word, rest string) (string, error) {
	name, value, hasValue := strings.Cut(word[2:], "=")
	if canonical, ok := s.aliases[name]; ok {
		name = canonical
	}
	takesValue, known := s.options[name]
	_, given := into[name]
	switch {
	case !known:
		return "", s.errorf("unknown option %s", echo(word))
	case given:
		return "", s.errorf("--%s given twice", name)
	case !takesValue && hasValue:
		return "", s.errorf("--%s takes no value", name)
	case takesValue && !hasValue:
		var quoted bool
		var err error
		value, quoted, rest, err = nextWord(rest)
		if err != nil {
			return "", s.errorf("%v", err)
		}
		if value == "" && !quoted {
			return "", s.errorf("--%s needs a value", name)
		}
	}
	if takesValue && strings.TrimSpace(value) == "" {
		return "", s.errorf("--%s needs a value", name)
	}
	into[name] = value
	return rest, nil
}

// missing names the first thing the usage expects after n words: the
// usage's (n+1)-th element that is not an option.
func (s argSyntax) missing(n int) string {
	var parts []string
	for _, f := range strings.Fields(s.usage) {
		if !strings.HasPrefix(f, "[") && !strings.HasSuffix(f, "]") {
			parts = append(parts, f)
		}
	}
	if n < len(parts) {
		return parts[n]
	}
	return "an argument"
}

func (s argSyntax) errorf(format string, a ...any) error {
	return fmt.Errorf("/%s: %s (usage: /%s %s)", s.command, fmt.Sprintf(format, a...), s.command, s.usage)
}

// nextWord reads the next word of s: a quoted string, or a run of
// characters up to a space. It returns the word, whether it was quoted,
// and what follows it.
func nextWord(s string) (word string, quoted bool, rest string, err error) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if s == "" {
		return "", false, "", nil
	}
	if q := s[0]; q == '"' || q == '\'' {
		word, rest, err := unquote(s)
		if err == nil && rest != "" {
			if r, _ := utf8.DecodeRuneInString(rest); !unicode.IsSpace(r) {
				return "", true, "", errors.New("a closing quote must end a word")
			}
		}
		return word, true, rest, err
	}
	end := strings.IndexFunc(s, unicode.IsSpace)
	if end < 0 {
		return s, false, "", nil
	}
	return s[:end], false, s[end:], nil
}

// unquote reads the quoted string s starts with: "..." with \" and \\
// escapes, or '...' as it is. It returns the string and what follows the
// closing quote.
func unquote(s string) (string, string, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && q == '"' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("no closing %c", q)
}

// restText returns the text that ends a line: the string inside the
// quotes when it is one quoted string, else the text as it is.
func restText(s string) (string, error) {
	if s == "" || s[0] != '"' && s[0] != '\'' {
		return s, nil
	}
	text, rest, err := unquote(s)
	if err != nil {
		return "", fmt.Errorf("%v: quote the whole text, or leave the quotes out", err)
	}
	if strings.TrimSpace(rest) != "" {
		return "", errors.New("text after the closing quote: quote the whole text, or leave the quotes out")
	}
	return text, nil
}
