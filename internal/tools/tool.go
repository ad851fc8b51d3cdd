// Package tools holds the built-in tools an agent calls (read, write, edit,
// ls, glob, grep, bash), the Set the agent loop picks them from, the
// workspace they are confined to and the permission policy that limits
// them.
//
// # The contract
//
// A tool never ends the agent loop by failing. Everything that goes wrong
// inside a call the model made — bad input, a missing file, a path outside
// the workspace, a command the policy refuses, a non-zero exit, a timeout —
// comes back as a Result with IsError set and a message written for the
// model, so it can correct itself. Run returns a non-nil error only when the
// call could not finish because its context was cancelled; that error wraps
// ctx.Err(), and the loop is being stopped anyway.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/superagents/superagents"
)

// Tool is something a model can call.
type Tool interface {
	// Spec describes the tool to the model: its name, what it does and the
	// JSON Schema of its input.
	Spec() superagents.ToolSpec
	// ReadOnly reports whether the tool leaves the workspace unchanged.
	// Profiles and policies that forbid writing keep only read-only tools.
	ReadOnly() bool
	// Run executes one call. See the package documentation for what a
	// returned error means: failures belong in the Result.
	Run(ctx context.Context, input json.RawMessage) (Result, error)
}

// Result is what a tool call returns to the model.
type Result struct {
	// Output is the text the model reads.
	Output string
	// IsError marks a failed call; Output then says what went wrong.
	IsError bool
}

// Errorf returns an error Result whose output is the formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Part returns the result as the tool_result part that answers the
// tool_call with the given id.
func (r Result) Part(callID, name string) superagents.Part {
	return superagents.Part{
		Type:    superagents.PartToolResult,
		CallID:  callID,
		Name:    name,
		Output:  r.Output,
		IsError: r.IsError,
	}
}

// toolNamePattern is what model APIs accept as a tool name (Anthropic and
// OpenAI both allow at most 64 of these characters).
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// New returns a tool whose input is the JSON object In. The input schema is
// generated from In (field tags `json` for names, `jsonschema` for
// descriptions; fields without omitempty are required), and every call's
// input is validated against it before run sees it, so run gets a
// well-formed In. Tools outside this package (the task tools) use New too.
func New[In any](name, description string, readOnly bool, run func(ctx context.Context, in In) (Result, error)) (Tool, error) {
	def, err := Define[In](name, description, readOnly)
	if err != nil {
		return nil, err
	}
	return def.Bind(run), nil
}

// Def is a tool's definition without its implementation: the name,
// description and input schema, computed once. Bind gives it a run
// function; a tool made anew for every turn (one that closes over the
// calling session, say) binds the same Def each time.
type Def[In any] struct {
	spec     superagents.ToolSpec
	readOnly bool
	schema   *jsonschema.Resolved
}

// Define checks a tool's name and description and derives its input
// schema from In (see New).
func Define[In any](name, description string, readOnly bool) (*Def[In], error) {
	if !toolNamePattern.MatchString(name) {
		return nil, fmt.Errorf("tool name %q: use 1 to 64 letters, digits, '_' or '-'", name)
	}
	if description == "" {
		return nil, fmt.Errorf("tool %s: empty description", name)
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: resolve input schema: %w", name, err)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: encode input schema: %w", name, err)
	}
	return &Def[In]{spec: superagents.ToolSpec{Name: name, Description: description, InputSchema: raw}, readOnly: readOnly, schema: resolved}, nil
}

// Spec returns what the model is told about the tool.
func (d *Def[In]) Spec() superagents.ToolSpec { return d.spec }

// Bind returns the tool with run as its implementation.
func (d *Def[In]) Bind(run func(ctx context.Context, in In) (Result, error)) Tool {
	return &funcTool[In]{spec: d.spec, readOnly: d.readOnly, schema: d.schema, run: run}
}

type funcTool[In any] struct {
	spec     superagents.ToolSpec
	readOnly bool
	schema   *jsonschema.Resolved
	run      func(ctx context.Context, in In) (Result, error)
}

func (t *funcTool[In]) Spec() superagents.ToolSpec { return t.spec }
func (t *funcTool[In]) ReadOnly() bool             { return t.readOnly }

func (t *funcTool[In]) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	in, err := decodeInput[In](t.schema, input)
	if err != nil {
		return Errorf("invalid input for %s: %v", t.spec.Name, err), nil
	}
	res, err := t.run(ctx, in)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return res, fmt.Errorf("%s: %w", t.spec.Name, err)
		}
		// Anything else is a failure the model should hear about.
		return Errorf("%s failed: %v", t.spec.Name, err), nil
	}
	return res, nil
}

// decodeInput checks the input against the schema (types, required and
// unknown fields) and decodes it. Empty input counts as {}.
func decodeInput[In any](schema *jsonschema.Resolved, input json.RawMessage) (In, error) {
	var in In
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(input, &generic); err != nil {
		return in, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := generic.(map[string]any); !ok {
		return in, errors.New("the input must be a JSON object")
	}
	if err := schema.Validate(generic); err != nil {
		return in, errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return in, err
	}
	return in, nil
}
