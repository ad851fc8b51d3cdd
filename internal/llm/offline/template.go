package offline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
)

// Script templates use the text/template syntax, parsed by
// text/template/parse, but are evaluated here. text/template's executor
// looks fields and methods up by name through reflection, and a program
// that can do that keeps every exported method of every type it links:
// the binary grows by tens of megabytes. Scripts need only text, calls of
// a few functions with literal arguments, pipelines and if/else.

// argKind is the type of a template function's parameter.
type argKind int

const (
	argString argKind = iota
	argInt
)

// templateFunc is a function a template may call.
type templateFunc struct {
	params []argKind
	// optional is how many of the last params may be left out.
	optional int
	call     func(args []any) (string, error)
}

// funcMap is the functions of one template execution, by name.
type funcMap map[string]templateFunc

// templateNames are the names a template may use; parse checks them.
var templateNames = map[string]any{
	"last_user":        true,
	"last_tool_result": true,
	"tool_result":      true,
	"group":            true,
	"slice":            true,
	"len":              true,
}

// builtins are the functions of text/template that scripts may use, with
// its meaning, on text: slice s i [j] is s[i:j] in bytes; len s is the
// length of s in bytes.
var builtins = funcMap{
	"slice": {params: []argKind{argString, argInt, argInt}, optional: 1, call: func(args []any) (string, error) {
		s, i := args[0].(string), args[1].(int)
		j := len(s)
		if len(args) == 3 {
			j = args[2].(int)
		}
		if i < 0 || j < i || j > len(s) {
			return "", fmt.Errorf("index out of range: [%d:%d] of %d bytes", i, j, len(s))
		}
		return s[i:j], nil
	}},
	"len": {params: []argKind{argString}, call: func(args []any) (string, error) {
		return strconv.Itoa(len(args[0].(string))), nil
	}},
}

// checkTemplate checks a template's syntax; it returns the text unchanged.
func checkTemplate(text string) (string, error) {
	if _, err := parseTemplate("template", text); err != nil {
		return "", err
	}
	return text, nil
}

func parseTemplate(name, text string) (*parse.Tree, error) {
	trees, err := parse.Parse(name, text, "", "", templateNames)
	if err != nil {
		return nil, err
	}
	tree := trees[name]
	if len(trees) != 1 || tree == nil {
		return nil, fmt.Errorf("template: %s: define and block are not supported", name)
	}
	if err := check(tree, tree.Root); err != nil {
		return nil, err
	}
	return tree, nil
}

// execute renders a template with functions bound to one request. It is
// parsed for each use, so nothing is shared between concurrent calls.
func execute(name, text string, funcs funcMap) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	tree, err := parseTemplate(name, text)
	if err != nil {
		return "", err
	}
	e := evaluator{tree: tree, funcs: funcs}
	var b strings.Builder
	if err := e.walk(&b, tree.Root); err != nil {
		return "", err
	}
	return b.String(), nil
}

// check refuses, at parse time, what the evaluator does not do.
func check(tree *parse.Tree, n parse.Node) error {
	unsupported := func(n parse.Node) error {
		loc, ctx := tree.ErrorContext(n)
		return fmt.Errorf("template: %s: %s is not supported in an offline script (text, functions, pipelines and if/else are)", loc, ctx)
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := check(tree, c); err != nil {
				return err
			}
		}
	case *parse.TextNode, *parse.CommentNode:
	case *parse.ActionNode:
		return checkPipe(tree, n.Pipe, unsupported)
	case *parse.IfNode:
		if err := checkPipe(tree, n.Pipe, unsupported); err != nil {
			return err
		}
		if err := check(tree, n.List); err != nil {
			return err
		}
		return check(tree, n.ElseList)
	default:
		return unsupported(n)
	}
	return nil
}

func checkPipe(tree *parse.Tree, p *parse.PipeNode, unsupported func(parse.Node) error) error {
	if len(p.Decl) > 0 {
		return unsupported(p)
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			switch a := a.(type) {
			case *parse.IdentifierNode, *parse.StringNode:
			case *parse.NumberNode:
				if !a.IsInt {
					return unsupported(a)
				}
			case *parse.PipeNode:
				if err := checkPipe(tree, a, unsupported); err != nil {
					return err
				}
			default:
				return unsupported(a)
			}
		}
	}
	return nil
}

// evaluator runs one parsed template; its errors read like text/template's.
type evaluator struct {
	tree  *parse.Tree
	funcs funcMap
}

func (e evaluator) walk(b *strings.Builder, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := e.walk(b, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		b.Write(n.Text)
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := e.pipe(n.Pipe)
		if err != nil {
			return err
		}
		b.WriteString(format(v))
	case *parse.IfNode:
		v, err := e.pipe(n.Pipe)
		if err != nil {
			return err
		}
		if truth(v) {
			return e.walk(b, n.List)
		}
		return e.walk(b, n.ElseList)
	default: // refused by check
		return e.errorf(n, "%s is not supported", n)
	}
	return nil
}

// pipe evaluates a pipeline: each command's result is the last argument
// of the next.
func (e evaluator) pipe(p *parse.PipeNode) (any, error) {
	var prev any
	for i, c := range p.Cmds {
		var final []any
		if i > 0 {
			final = []any{prev}
		}
		v, err := e.command(c, final)
		if err != nil {
			return nil, err
		}
		prev = v
	}
	return prev, nil
}

func (e evaluator) command(c *parse.CommandNode, final []any) (any, error) {
	first := c.Args[0]
	id, ok := first.(*parse.IdentifierNode)
	if !ok {
		if len(c.Args) > 1 || len(final) > 0 {
			return nil, e.errorf(first, "can't give argument to non-function %s", first)
		}
		return e.arg(first)
	}
	args := make([]any, 0, len(c.Args)-1+len(final))
	for _, a := range c.Args[1:] {
		v, err := e.arg(a)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	return e.call(c, id.Ident, append(args, final...))
}

func (e evaluator) arg(n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		return n.Int64, nil
	case *parse.PipeNode:
		return e.pipe(n)
	case *parse.IdentifierNode:
		return e.call(n, n.Ident, nil)
	}
	return nil, e.errorf(n, "%s is not supported", n)
}

func (e evaluator) call(at parse.Node, name string, args []any) (any, error) {
	f, ok := e.funcs[name]
	if !ok {
		f, ok = builtins[name]
	}
	if !ok {
		return nil, e.errorf(at, "%q is not a defined function", name)
	}
	if len(args) < len(f.params)-f.optional || len(args) > len(f.params) {
		return nil, e.errorf(at, "wrong number of args for %s: want %d got %d", name, len(f.params), len(args))
	}
	for i := range args {
		v, err := convert(args[i], f.params[i])
		if err != nil {
			return nil, e.errorf(at, "wrong type for value; expected %s: argument %d of %s", err, i+1, name)
		}
		args[i] = v
	}
	out, err := f.call(args)
	if err != nil {
		return nil, e.errorf(at, "error calling %s: %w", name, err)
	}
	return out, nil
}

func (e evaluator) errorf(n parse.Node, format string, args ...any) error {
	loc, ctx := e.tree.ErrorContext(n)
	return fmt.Errorf("template: %s: executing %q at <%s>: %w", loc, e.tree.Name, ctx, fmt.Errorf(format, args...))
}

// convert gives a value the kind a parameter takes: a number written as
// text is accepted where a number is wanted, as a group's text can be.
func convert(v any, want argKind) (any, error) {
	switch want {
	case argInt:
		switch v := v.(type) {
		case int64:
			return int(v), nil
		case string:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, errors.New("int")
			}
			return n, nil
		}
		return nil, errors.New("int")
	default:
		return format(v), nil
	}
}

func format(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(v)
}

// truth is text/template's: an empty string or zero is false.
func truth(v any) bool {
	switch v := v.(type) {
	case string:
		return v != ""
	case int64:
		return v != 0
	}
	return v != nil
}
