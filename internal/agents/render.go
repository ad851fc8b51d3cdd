package agents

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// RenderOptions shorten the paths a listing shows.
type RenderOptions struct {
	// Workspace: project profile paths are shown relative to it.
	Workspace string
	// Home: paths under it are shown with "~".
	Home string
	// DescriptionWidth cuts descriptions to this many characters (default
	// 72; negative for no cut).
	DescriptionWidth int
}

// RenderList writes the profiles as a table — name, model, tools, source
// and description — for the `superagents agents` command, followed by the
// problems found while loading, if any.
func RenderList(w io.Writer, profiles []Profile, problems []error, opts RenderOptions) error {
	width := opts.DescriptionWidth
	if width == 0 {
		width = 72
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMODEL\tTOOLS\tSOURCE\tDESCRIPTION")
	for _, p := range profiles {
		model := p.Model
		if model == "" {
			model = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, model, toolsText(p.Tools), opts.source(p), cut(oneLine(p.Description), width))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("render profiles: %w", err)
	}
	if len(problems) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nThese profile files could not be loaded:")
	for _, err := range problems {
		var fe *FileError
		if errors.As(err, &fe) {
			shown := *fe
			shown.Path = opts.path(fe.Path)
			err = &shown
		}
		if _, werr := fmt.Fprintf(w, "  %v\n", err); werr != nil {
			return fmt.Errorf("render profiles: %w", werr)
		}
	}
	return nil
}

func toolsText(names []string) string {
	switch {
	case names == nil:
		return "all"
	case len(names) == 0:
		return "none"
	}
	return strings.Join(names, ",")
}

func (o RenderOptions) source(p Profile) string {
	s := string(p.Source.Kind)
	if p.Source.Path != "" {
		s += " " + o.path(p.Source.Path)
	}
	if len(p.Overrides) > 0 {
		s += " (overrides " + string(p.Overrides[0].Kind) + ")"
	}
	return s
}

// path shortens a path for display: relative to the workspace when inside
// it, with ~ for the home directory.
func (o RenderOptions) path(p string) string {
	if o.Workspace != "" {
		if rel, err := filepath.Rel(o.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if o.Home != "" {
		if rel, err := filepath.Rel(o.Home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cut(s string, width int) string {
	if width < 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + "…"
}
