package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const sessionColumns = `id, parent_id, fork_message_id, agent, model, title, origin, created_at, deleted_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanSession(r rowScanner, extra ...any) (sa.Session, error) {
	var (
		s         sa.Session
		parent    sql.NullString
		forkPoint sql.NullInt64
		created   int64
		deleted   sql.NullInt64
	)
	dest := append([]any{&s.ID, &parent, &forkPoint, &s.Agent, &s.Model, &s.Title, &s.Origin, &created, &deleted}, extra...)
	if err := r.Scan(dest...); err != nil {
		return sa.Session{}, err
	}
	s.ParentID, s.ForkMessageID = parent.String, forkPoint.Int64
	s.CreatedAt, s.DeletedAt = fromNanos(created), fromNullNanos(deleted)
	return s, nil
}

// InsertSession writes a session row and records its creation.
func (tx *writeTx) InsertSession(ctx context.Context, sess sa.Session) error {
	var parent sql.NullString
	var forkPoint sql.NullInt64
	if sess.ParentID != "" {
		parent = sql.NullString{String: sess.ParentID, Valid: true}
		forkPoint = sql.NullInt64{Int64: sess.ForkMessageID, Valid: true}
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO sessions (id, parent_id, fork_message_id, agent, model, title, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		sess.ID, parent, forkPoint, sess.Agent, sess.Model, sess.Title, sess.Origin, nanos(sess.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return tx.record(ctx, sa.ChangeSessionCreated, sess.ID, "", sess)
}

// Session returns one live session by its full id.
func (s *Store) Session(ctx context.Context, id string) (sa.Session, error) {
	return liveSession(ctx, s.reader, id)
}

// liveSession reads a session that exists and is not deleted.
func liveSession(ctx context.Context, q querier, id string) (sa.Session, error) {
	sess, err := scanSession(q.QueryRowContext(ctx,
		`SELECT `+sessionColumns+` FROM sessions WHERE id = ? AND deleted_at IS NULL`, id))
	if err := storekit.ReadError(err, sql.ErrNoRows, "session", id); err != nil {
		return sa.Session{}, err
	}
	return sess, nil
}

// requireLive checks that a session exists and is not deleted, without
// reading its row: the check of every write and history read.
func requireLive(ctx context.Context, q querier, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ? AND deleted_at IS NULL`, id).Scan(&one)
	return storekit.ReadError(err, sql.ErrNoRows, "session", id)
}

// ResolveSession finds a live session by full id or unique prefix.
func (s *Store) ResolveSession(ctx context.Context, ref string) (sa.Session, error) {
	if sess, err := liveSession(ctx, s.reader, storekit.ExactID(ref)); !errors.Is(err, sa.ErrNotFound) {
		return sess, err
	}
	id, err := resolve(ctx, s.reader, "session", `SELECT id FROM sessions WHERE id >= ? AND id < ? AND deleted_at IS NULL ORDER BY id LIMIT `+limitParam, ref)
	if err != nil {
		return sa.Session{}, err
	}
	return liveSession(ctx, s.reader, id)
}

// resolve runs a prefix range query (prefix, upper bound, limit) and turns
// its result into one id, a not-found error or an ambiguity error.
func resolve(ctx context.Context, q querier, what, query, ref string) (string, error) {
	prefix, err := sa.CheckIDPrefix(ref)
	if err != nil {
		return "", err
	}
	rows, err := q.QueryContext(ctx, query, prefix, sa.PrefixUpperBound(prefix), storekit.MaxCandidates+1)
	if err != nil {
		return "", fmt.Errorf("find %s %s: %w", what, ref, err)
	}
	ids, err := collectStrings(rows)
	if err != nil {
		return "", fmt.Errorf("find %s %s: %w", what, ref, err)
	}
	return storekit.PickID(what, ref, prefix, ids)
}

func collectStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListSessions lists live sessions, newest first, with the number of
// messages each stores itself and the id of the newest.
func (s *Store) ListSessions(ctx context.Context, f sa.SessionFilter) ([]sa.SessionSummary, error) {
	query := `SELECT ` + prefixed("s.", sessionColumns) + `,
		(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
		(SELECT COALESCE(MAX(m.id), 0) FROM messages m WHERE m.session_id = s.id)
		FROM sessions s WHERE s.deleted_at IS NULL`
	var args []any
	if f.ParentID != "" {
		query += ` AND s.parent_id = ?`
		args = append(args, f.ParentID)
	}
	query += ` ORDER BY s.created_at DESC, s.id DESC`
	if err := storekit.CheckPage("sessions", f.Offset, f.Limit); err != nil {
		return nil, err
	}
	if f.Limit > 0 || f.Offset > 0 {
		query += limitOffset
		args = append(args, cmp.Or(f.Limit, -1), f.Offset)
	}
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []sa.SessionSummary
	for rows.Next() {
		var sum sa.SessionSummary
		if sum.Session, err = scanSession(rows, &sum.MessageCount, &sum.LastMessageID); err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ", ")
	for i := range cols {
		cols[i] = prefix + cols[i]
	}
	return strings.Join(cols, ", ")
}

// LockParent reads a live session (writes are serial: nothing to lock).
func (tx *writeTx) LockParent(ctx context.Context, id string) (sa.Session, error) {
	return liveSession(ctx, tx, id)
}

// InsertMessages writes messages in order, records each (with the id of
// the task they are about, if any), and returns them as stored.
func (tx *writeTx) InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	const insert = `INSERT INTO messages
		(session_id, role, kind, parts, summary, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	out := make([]sa.Message, len(msgs))
	for i, m := range msgs {
		m = storekit.PrepareMessage(m, sessionID, tx.now)
		parts, err := json.Marshal(m.Parts)
		if err != nil {
			return nil, fmt.Errorf("encode parts: %w", err)
		}
		u := m.Usage
		m.ID, err = tx.insert(ctx, insert, sessionID, m.Role, m.Kind, parts, boolInt(m.Summary), m.Model,
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, nanos(m.CreatedAt))
		if err != nil {
			return nil, fmt.Errorf("insert message: %w", err)
		}
		if err := tx.record(ctx, sa.ChangeSessionMessage, sessionID, taskID, storekit.EncodedMessage{Message: m, Parts: parts}); err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// MessagesAfter returns a live session's own messages after afterID.
func (s *Store) MessagesAfter(ctx context.Context, sessionID string, afterID int64) ([]sa.Message, error) {
	// No transaction: the messages are one statement, and a deletion
	// between the check and the read gives what was there just before it.
	// Not counted first either: what came since a message the caller has
	// is usually a few messages, which a count would cost more than save.
	if err := requireLive(ctx, s.reader, sessionID); err != nil {
		return nil, fmt.Errorf("messages of session %s: %w", sessionID, err)
	}
	msgs, err := lineage{q: s.reader}.AppendMessages(ctx, nil, sessionID, afterID, math.MaxInt64, 0)
	if err != nil {
		return nil, fmt.Errorf("messages of session %s: %w", sessionID, err)
	}
	return msgs, nil
}

// lineage is the LineageReader over one transaction.
type lineage struct {
	q querier
	storekit.Lineage
}

func newLineage(q querier) lineage { return lineage{q: q, Lineage: storekit.NewLineage(shared{q})} }

func (l lineage) AppendMessages(ctx context.Context, dst []sa.Message, id string, after, upto int64, limit int) ([]sa.Message, error) {
	rows, err := l.q.QueryContext(ctx, `SELECT `+messageColumns+`
		FROM messages WHERE session_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT `+limitParam, id, after, upto, cmp.Or(limit, -1))
	if err != nil {
		return nil, err
	}
	return readMessages(rows, dst, id)
}

func (l lineage) Latest(ctx context.Context, id string, after, upto int64, match sa.MessageMatch) (sa.Message, bool, error) {
	args := []any{id, after, upto}
	var conds []string
	if len(match.Kinds) > 0 {
		conds = append(conds, "kind IN ("+placeholders(len(match.Kinds))+")")
		for _, k := range match.Kinds {
			args = append(args, string(k))
		}
	}
	if len(match.Roles) > 0 {
		conds = append(conds, "role IN ("+placeholders(len(match.Roles))+")")
		for _, r := range match.Roles {
			args = append(args, string(r))
		}
	}
	// Walks the (session_id, id) index from the newest message back to
	// the first that matches.
	rows, err := l.q.QueryContext(ctx, `SELECT `+messageColumns+`
		FROM messages WHERE session_id = ? AND id > ? AND id <= ? AND (`+strings.Join(conds, " OR ")+`)
		ORDER BY id DESC LIMIT 1`, args...)
	if err != nil {
		return sa.Message{}, false, err
	}
	msgs, err := readMessages(rows, make([]sa.Message, 0, 1), id)
	if err != nil || len(msgs) == 0 {
		return sa.Message{}, false, err
	}
	return msgs[0], true, nil
}

// messageColumns are the columns readMessages reads. The session id is not
// among them: it is the one asked for, not read again per message.
const messageColumns = `id, role, kind, parts, summary, model,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at`

// readMessages appends the rows of a query of messageColumns, all of
// session id, to out and closes them.
func readMessages(rows *sql.Rows, out []sa.Message, id string) ([]sa.Message, error) {
	defer rows.Close()
	// The scan destinations are declared once: Scan takes their
	// addresses, so declared in the loop each row would allocate them.
	var (
		m       sa.Message
		parts   sql.RawBytes // decoded at once, so no copy is needed
		summary int
		created int64
		err     error
	)
	u := &m.Usage
	dest := []any{&m.ID, &m.Role, &m.Kind, &parts, &summary, &m.Model,
		&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &created}
	for rows.Next() {
		m = sa.Message{SessionID: id}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if m.Parts, err = decodeParts(parts); err != nil {
			return nil, fmt.Errorf("%w: message %d has unreadable parts: %v", sa.ErrCorrupt, m.ID, err)
		}
		m.Summary, m.CreatedAt = summary != 0, fromNanos(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

// placeholders returns n comma-separated parameters, for an IN list.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
