package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	sa "github.com/superagents/superagents"
)

// writeSessionTable prints sessions as an aligned table.
// origins, when not empty, adds a FROM column: where each session was
// imported from.
func writeSessionTable(w io.Writer, sessions []sa.SessionSummary, origins map[string]string, loc *time.Location) error {
	if len(sessions) == 0 {
		_, err := fmt.Fprintln(w, "No sessions yet. Start one with 'superagents' or 'superagents import FILE'.")
		return err
	}
	rows := make([][]string, len(sessions))
	for i, s := range sessions {
		parent := "-"
		if s.ParentID != "" {
			parent = sa.ShortID(s.ParentID)
		}
		rows[i] = []string{sa.ShortID(s.ID), parent, orDash(s.Agent), fmt.Sprint(s.MessageCount),
			s.CreatedAt.In(loc).Format("2006-01-02 15:04"), truncateRunes(oneLineText(s.Title), 50)}
		if len(origins) > 0 {
			rows[i] = slices.Insert(rows[i], 5, orDash(origins[s.ID]))
		}
	}
	header := []string{"ID", "PARENT", "AGENT", "MESSAGES", "CREATED", "TITLE"}
	if len(origins) > 0 {
		header = slices.Insert(header, 5, "FROM")
	}
	return writeTable(w, header, rows)
}

// writeTable prints rows under a header, in aligned columns, without the
// trailing blanks tabwriter leaves after an empty last column.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, ""))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeTranscript prints a history as plain text: "User:" and "Agent:"
// turns, tool calls and results, notifications. Reasoning and text meant
// only for the model are left out.
func writeTranscript(w io.Writer, msgs []sa.Message) error {
	var b strings.Builder
	for _, m := range msgs {
		block := transcriptBlock(m)
		if block == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(block)
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func transcriptBlock(m sa.Message) string {
	label := map[sa.Role]string{sa.RoleUser: "User", sa.RoleAssistant: "Agent", sa.RoleSystem: "System", sa.RoleTool: "Tool"}[m.Role]
	switch m.Kind {
	case sa.KindNotification:
		label = "Notification"
	case sa.KindCommand:
		label = "Command"
	case sa.KindClear:
		return "--- context cleared ---"
	}
	var lines []string
	if text := m.Text(); text != "" {
		lines = append(lines, label+": "+text)
	}
	for _, p := range m.Parts {
		switch p.Type {
		case sa.PartToolCall:
			lines = append(lines, fmt.Sprintf("[Tool: %s] %s", p.Name, compactInput(p.Input)))
		case sa.PartToolResult:
			tag := "Result"
			if p.IsError {
				tag = "Error"
			}
			lines = append(lines, fmt.Sprintf("[%s: %s] %s", tag, p.Name, p.Output))
		case sa.PartCompaction:
			lines = append(lines, "--- earlier conversation compacted ---")
		}
	}
	return strings.Join(lines, "\n")
}

func compactInput(in []byte) string {
	if len(in) == 0 {
		return "{}"
	}
	return string(in)
}

// oneLineText folds whitespace, for titles in tables.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncateRunes cuts s to at most n characters, marking the cut.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// titleFrom makes a session title from the first user text.
func titleFrom(msgs []sa.Message) string {
	for _, m := range msgs {
		if m.Role == sa.RoleUser && m.Kind != sa.KindNotification {
			if t := oneLineText(m.Text()); t != "" {
				return truncateRunes(t, 80)
			}
		}
	}
	return ""
}
