package offline

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// maxExpression bounds the expressions the offline model evaluates, so no
// input can make it work hard.
const maxExpression = 200

// question strips the usual ways of asking for a calculation, also as a
// follow-up ("And 8*8?", "What about 9*9?").
var question = regexp.MustCompile(`(?i)^\s*(?:(?:and|now|then|also|so|ok),?\s+)?(?:(?:what|how\s+much)(?:\s+is|'s)|what\s+about|calculate|compute|evaluate)?\s*`)

// expressionChars are the characters an arithmetic expression may use.
const expressionChars = "0123456789.+-*/×÷() \t"

// arithmetic answers "What is 2+2?" with "2+2 equals 4.". It reports false
// when text is not a calculation.
func arithmetic(text string) (string, bool) {
	expr := strings.TrimSpace(question.ReplaceAllString(text, ""))
	expr = strings.TrimSpace(strings.TrimRight(expr, "?.=! \t"))
	if expr == "" || len(expr) > maxExpression || strings.ContainsFunc(expr, func(r rune) bool { return !strings.ContainsRune(expressionChars, r) }) {
		return "", false
	}
	if !strings.ContainsAny(expr, "0123456789") || !strings.ContainsAny(strings.TrimLeft(expr, "+- \t("), "+-*/×÷") {
		return "", false
	}
	v, err := evaluate(expr)
	switch {
	case errors.Is(err, errDivisionByZero):
		return fmt.Sprintf("I cannot compute that: %s divides by zero.", expr), true
	case err != nil:
		return fmt.Sprintf("I cannot compute that: %s is not an expression I understand (%v).", expr, err), true
	}
	if v.IsInt() {
		return fmt.Sprintf("%s equals %s.", expr, v.Num().String()), true
	}
	if exact, ok := decimal(v); ok {
		return fmt.Sprintf("%s equals %s.", expr, exact), true
	}
	return fmt.Sprintf("%s equals approximately %s.", expr, trimZeros(v.FloatString(10))), true
}

var errDivisionByZero = errors.New("division by zero")

// evaluate computes an expression of + - * / and parentheses over decimal
// numbers, exactly (with rationals, so 0.1+0.2 is 0.3).
func evaluate(expr string) (*big.Rat, error) {
	p := &parser{in: strings.NewReplacer("×", "*", "÷", "/").Replace(expr)}
	v, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.in) {
		return nil, fmt.Errorf("unexpected %q", p.in[p.pos:p.pos+1])
	}
	return v, nil
}

type parser struct {
	in  string
	pos int
}

func (p *parser) space() {
	for p.pos < len(p.in) && (p.in[p.pos] == ' ' || p.in[p.pos] == '\t') {
		p.pos++
	}
}

// peek returns the next character that is not a space, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

// sum = product { ("+" | "-") product }
func (p *parser) sum() (*big.Rat, error) {
	v, err := p.product()
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			return v, nil
		}
		p.pos++
		var w *big.Rat
		if w, err = p.product(); err == nil {
			if op == '+' {
				v.Add(v, w)
			} else {
				v.Sub(v, w)
			}
		}
	}
	return nil, err
}

// product = factor { ("*" | "/") factor }
func (p *parser) product() (*big.Rat, error) {
	v, err := p.factor()
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' {
			return v, nil
		}
		p.pos++
		var w *big.Rat
		if w, err = p.factor(); err == nil {
			if op == '*' {
				v.Mul(v, w)
			} else if w.Sign() == 0 {
				err = errDivisionByZero
			} else {
				v.Quo(v, w)
			}
		}
	}
	return nil, err
}

// factor = ("+" | "-") factor | "(" sum ")" | number
func (p *parser) factor() (*big.Rat, error) {
	switch c := p.peek(); {
	case c == '-' || c == '+':
		p.pos++
		v, err := p.factor()
		if err == nil && c == '-' {
			v.Neg(v)
		}
		return v, err
	case c == '(':
		p.pos++
		v, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, errors.New("missing )")
		}
		p.pos++
		return v, nil
	case c == '.' || '0' <= c && c <= '9':
		start := p.pos
		for p.pos < len(p.in) && (p.in[p.pos] == '.' || '0' <= p.in[p.pos] && p.in[p.pos] <= '9') {
			p.pos++
		}
		v, ok := new(big.Rat).SetString(p.in[start:p.pos])
		if !ok || strings.Count(p.in[start:p.pos], ".") > 1 {
			return nil, fmt.Errorf("bad number %q", p.in[start:p.pos])
		}
		return v, nil
	case c == 0:
		return nil, errors.New("it ends too early")
	default:
		return nil, fmt.Errorf("unexpected %q", string(c))
	}
}

// decimal writes v exactly when its decimal expansion ends: when its
// denominator is 2^a·5^b, with max(a, b) places.
func decimal(v *big.Rat) (string, bool) {
	d := new(big.Int).Set(v.Denom())
	places := 0
	for _, f := range []*big.Int{big.NewInt(2), big.NewInt(5)} {
		n := 0
		for new(big.Int).Mod(d, f).Sign() == 0 {
			d.Quo(d, f)
			n++
		}
		places = max(places, n)
	}
	if !d.IsInt64() || d.Int64() != 1 {
		return "", false
	}
	return trimZeros(v.FloatString(places)), true
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
