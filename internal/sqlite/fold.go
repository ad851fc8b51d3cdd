package sqlite

import (
	"database/sql/driver"
	"fmt"
	"unicode/utf8"

	modernc "modernc.org/sqlite"

	sa "github.com/superagents/superagents"
)

// containsFoldFunc is the SQL function behind task search:
// sa_contains_fold(text, needle) is 1 when text contains needle, needle
// being folded already (foldCase), 0 otherwise, NULL for a NULL text.
// SQLite's own LIKE and lower() only know the case of ASCII letters.
const containsFoldFunc = "sa_contains_fold"

func init() {
	// The function is registered with the driver, for every connection it
	// opens; a second registration of the name would fail, so it is done
	// once, here.
	modernc.MustRegisterFunction(containsFoldFunc, &modernc.FunctionImpl{
		NArgs:         2,
		Deterministic: true,
		// The arguments are read in place, and whole: copied, a text
		// would end at its first NUL. They are not kept past the call.
		VolatileArgs: true,
		Scalar:       containsFold,
	})
}

func containsFold(_ *modernc.FunctionContext, args []driver.Value) (driver.Value, error) {
	text, ok, err := textArg(args[0])
	if err != nil || !ok {
		return nil, err
	}
	needle, ok, err := textArg(args[1])
	if err != nil || !ok {
		return nil, err
	}
	if containsFolded(text, needle) {
		return int64(1), nil
	}
	return int64(0), nil
}

// containsFolded reports whether foldCase(s) contains needle, a folded
// string, without making foldCase(s): it runs once per row searched.
func containsFolded(s, needle string) bool {
	for i := 0; ; {
		if hasFoldedPrefix(s[i:], needle) {
			return true
		}
		if i == len(s) {
			return false
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
	}
}

// hasFoldedPrefix reports whether foldCase(s) starts with prefix, a
// folded string.
func hasFoldedPrefix(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		r, n := nextRune(s)
		p, m := nextRune(prefix)
		if foldRune(r) != p {
			return false
		}
		s, prefix = s[n:], prefix[m:]
	}
	return true
}

// nextRune decodes the first character of a non-empty s, quickly when
// it is ASCII.
func nextRune(s string) (rune, int) {
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	return utf8.DecodeRuneInString(s)
}

// textArg reads a text argument of an SQL function: false for NULL.
func textArg(v driver.Value) (string, bool, error) {
	switch v := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case []byte:
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("%s: want text, not %T", containsFoldFunc, v)
}

// foldCase and foldRune are the store-wide folding (superagents.FoldCase):
// the search text is folded by it, and so must the descriptions be.
func foldCase(s string) string { return sa.FoldCase(s) }

func foldRune(r rune) rune { return sa.FoldRune(r) }
