package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// bin passes a string to a BYTEA column byte for byte (see the schema).
type bin string

func (b bin) BytesValue() ([]byte, error) { return append([]byte{}, b...), nil }

// binTo scans a BYTEA column into a string.
type binTo struct{ p *string }

func (b binTo) ScanBytes(v []byte) error {
	*b.p = string(v)
	return nil
}

const sessionColumns = `id, parent_id, fork_message_id, agent, model, title, origin, created_at, deleted_at`

func scanSession(r pgx.Row, extra ...any) (sa.Session, error) {
	var (
		s         sa.Session
		parent    *string
		forkPoint *int64
		created   int64
		deleted   *int64
		origin    string
	)
	dest := append([]any{&s.ID, &parent, &forkPoint, binTo{&s.Agent}, binTo{&s.Model}, binTo{&s.Title}, binTo{&origin}, &created, &deleted}, extra...)
	if err := r.Scan(dest...); err != nil {
		return sa.Session{}, err
	}
	if parent != nil {
		s.ParentID, s.ForkMessageID = *parent, *forkPoint
	}
	s.Origin = sa.Origin(origin)
	s.CreatedAt, s.DeletedAt = fromNanos(created), fromNullNanos(deleted)
	return s, nil
}

// InsertSession writes a session row and records its creation, in one
// round trip.
func (tx *writeTx) InsertSession(ctx context.Context, sess sa.Session) error {
	var parent *string
	var forkPoint *int64
	if sess.ParentID != "" {
		parent, forkPoint = &sess.ParentID, &sess.ForkMessageID
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO sessions (id, parent_id, fork_message_id, agent, model, title, origin, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sess.ID, parent, forkPoint, bin(sess.Agent), bin(sess.Model), bin(sess.Title), bin(sess.Origin), nanos(sess.CreatedAt))
	if err := tx.recordAfter(ctx, b, sa.ChangeSessionCreated, sess.ID, "", sess); err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// Session returns one live session by its full id.
func (s *Store) Session(ctx context.Context, id string) (sa.Session, error) {
	return liveSession(ctx, s.pool, id, "")
}

// Row locks a session read in a write transaction takes. Append takes
// lockAppend; fork and task launch take lockRead, which lets them run
// together but not alongside an append; deletion takes lockDelete.
const (
	lockRead   = " FOR SHARE"
	lockAppend = " FOR NO KEY UPDATE"
	lockDelete = " FOR UPDATE"
)

// liveSession reads a session that exists and is not deleted, locking its
// row as lock says ("" for none).
func liveSession(ctx context.Context, q querier, id, lock string) (sa.Session, error) {
	if !storekit.Storable(id) {
		return sa.Session{}, fmt.Errorf("session %s: %w", id, sa.ErrNotFound)
	}
	sess, err := scanSession(q.QueryRow(ctx,
		`SELECT `+sessionColumns+` FROM sessions WHERE id = $1 AND deleted_at IS NULL`+lock, id))
	if err := storekit.ReadError(err, pgx.ErrNoRows, "session", id); err != nil {
		return sa.Session{}, err
	}
	return sess, nil
}

// ResolveSession finds a live session by full id or unique prefix.
func (s *Store) ResolveSession(ctx context.Context, ref string) (sa.Session, error) {
	if sess, err := liveSession(ctx, s.pool, storekit.ExactID(ref), ""); !errors.Is(err, sa.ErrNotFound) {
		return sess, err
	}
	id, err := resolve(ctx, s.pool, "session",
		`SELECT id FROM sessions WHERE id >= $1 AND id < $2 AND deleted_at IS NULL ORDER BY id LIMIT $3`, ref, false)
	if err != nil {
		return sa.Session{}, err
	}
	return liveSession(ctx, s.pool, id, "")
}

// resolve runs a prefix range query (prefix, upper bound, limit) and turns
// its result into one id, a not-found error or an ambiguity error. binary
// says the column is BYTEA.
func resolve(ctx context.Context, q querier, what, query, ref string, binary bool) (string, error) {
	prefix, err := sa.CheckIDPrefix(ref)
	if err != nil {
		return "", err
	}
	var rows pgx.Rows
	switch {
	case binary:
		rows, err = q.Query(ctx, query, bin(prefix), bin(sa.PrefixUpperBound(prefix)), storekit.MaxCandidates+1)
	case !storekit.Storable(prefix) || !storekit.Storable(sa.PrefixUpperBound(prefix)):
		return "", sa.NotFoundf("no %s with id %s", what, ref)
	default:
		rows, err = q.Query(ctx, query, prefix, sa.PrefixUpperBound(prefix), storekit.MaxCandidates+1)
	}
	if err != nil {
		return "", fmt.Errorf("find %s %s: %w", what, ref, err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id string
		err := r.Scan(binTo{&id})
		return id, err
	})
	if err != nil {
		return "", fmt.Errorf("find %s %s: %w", what, ref, err)
	}
	return storekit.PickID(what, ref, prefix, ids)
}

// limitArg is a LIMIT argument: NULL (no limit) for 0.
func limitArg(limit int) any {
	if limit == 0 {
		return nil
	}
	return limit
}

// ListSessions lists live sessions, newest first, with the number of
// messages each stores itself and the id of the newest.
func (s *Store) ListSessions(ctx context.Context, f sa.SessionFilter) ([]sa.SessionSummary, error) {
	if err := storekit.CheckPage("sessions", f.Offset, f.Limit); err != nil {
		return nil, err
	}
	query := `SELECT ` + prefixed("s.", sessionColumns) + `,
		(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
		(SELECT COALESCE(MAX(m.id), 0) FROM messages m WHERE m.session_id = s.id)
		FROM sessions s WHERE s.deleted_at IS NULL`
	args := []any{limitArg(f.Limit), f.Offset}
	if f.ParentID != "" {
		if !storekit.Storable(f.ParentID) {
			return nil, nil
		}
		query += ` AND s.parent_id = $3`
		args = append(args, f.ParentID)
	}
	query += ` ORDER BY s.created_at DESC, s.id DESC LIMIT $1 OFFSET $2`
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sa.SessionSummary, error) {
		var sum sa.SessionSummary
		var err error
		sum.Session, err = scanSession(r, &sum.MessageCount, &sum.LastMessageID)
		return sum, err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ", ")
	for i := range cols {
		cols[i] = prefix + strings.TrimSpace(cols[i])
	}
	return strings.Join(cols, ", ")
}

// LockParent reads a live session, locking its row against appends (not
// against other forks and launches) until the transaction ends.
func (tx *writeTx) LockParent(ctx context.Context, id string) (sa.Session, error) {
	return liveSession(ctx, tx, id, lockRead)
}

// insertMessage writes a message and records it in the change log, in
// one statement: the change's data is the message's JSON, encoded without
// its id (the first field), to which the id is added.
const insertMessage = `WITH m AS (INSERT INTO messages
		(session_id, role, kind, parts, summary, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at)
		VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id),
	c AS (INSERT INTO changes (kind, session_id, task_id, data, created_at)
		SELECT 'session.message', $2, $14, '{"id":' || m.id || ',' || substr($13::text, 2), $12 FROM m RETURNING id),
	` + pruneChanges + ` SELECT id FROM m`

// InsertMessages writes messages in order, records each (with the id of
// the task they are about, if any), and returns them as stored. The
// caller holds the session's row (or created it). The statements go in
// one round trip, with the id lock.
func (tx *writeTx) InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]sa.Message, len(msgs))
	batch := &pgx.Batch{}
	for i, m := range msgs {
		m = storekit.PrepareMessage(m, sessionID, tx.now)
		m.ID = 0 // the change's data gets it from the insert
		parts, err := json.Marshal(m.Parts)
		if err != nil {
			return nil, fmt.Errorf("encode parts: %w", err)
		}
		data, err := json.Marshal(storekit.EncodedMessage{Message: m, Parts: parts})
		if err != nil {
			return nil, fmt.Errorf("encode change: %w", err)
		}
		u := m.Usage
		out[i] = m
		batch.Queue(insertMessage, keepChanges, sessionID, string(m.Role), string(m.Kind), string(parts), m.Summary,
			bin(m.Model), u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, nanos(m.CreatedAt),
			string(data), taskID).QueryRow(func(row pgx.Row) error { return row.Scan(&out[i].ID) })
	}
	res, err := tx.send(ctx, batch)
	if err == nil {
		err = res.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("insert messages: %w", err)
	}
	return out, nil
}

// MessagesAfter returns a live session's own messages after afterID.
func (s *Store) MessagesAfter(ctx context.Context, sessionID string, afterID int64) ([]sa.Message, error) {
	var msgs []sa.Message
	err := s.readLive(ctx, sessionID, "messages", func(l lineage) (err error) {
		msgs, err = l.AppendMessages(ctx, nil, sessionID, afterID, math.MaxInt64, 0)
		return err
	})
	return msgs, err
}

// lineage is the LineageReader over one transaction.
type lineage struct {
	q querier
	storekit.Lineage
}

func newLineage(q querier) lineage { return lineage{q: q, Lineage: storekit.NewLineage(shared{q})} }

// requireLive checks that a session is live, locking nothing.
func requireLive(ctx context.Context, q querier, id string) error {
	_, err := liveSession(ctx, q, id, "")
	return err
}

func (l lineage) AppendMessages(ctx context.Context, dst []sa.Message, id string, after, upto int64, limit int) ([]sa.Message, error) {
	var most *int // NULL: no limit
	if limit > 0 {
		most = &limit
	}
	rows, err := l.q.Query(ctx, `SELECT `+messageColumns+`
		FROM messages WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id LIMIT $4`, id, after, upto, most)
	if err != nil {
		return nil, err
	}
	return readMessages(rows, dst)
}

func (l lineage) Latest(ctx context.Context, id string, after, upto int64, match sa.MessageMatch) (sa.Message, bool, error) {
	kinds := make([]string, len(match.Kinds))
	for i, k := range match.Kinds {
		kinds[i] = string(k)
	}
	roles := make([]string, len(match.Roles))
	for i, r := range match.Roles {
		roles[i] = string(r)
	}
	// Walks the (session_id, id) index from the newest message back to
	// the first that matches; the order is the index's own, so that the
	// planner sees it serves the LIMIT.
	rows, err := l.q.Query(ctx, `SELECT `+messageColumns+`
		FROM messages WHERE session_id = $1 AND id > $2 AND id <= $3 AND (kind = ANY($4) OR role = ANY($5))
		ORDER BY session_id DESC, id DESC LIMIT 1`, id, after, upto, kinds, roles)
	if err != nil {
		return sa.Message{}, false, err
	}
	msgs, err := readMessages(rows, nil)
	if err != nil || len(msgs) == 0 {
		return sa.Message{}, false, err
	}
	return msgs[0], true, nil
}

// messageColumns are the columns readMessages reads.
const messageColumns = `id, session_id, role, kind, parts, summary, model,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at`

// readMessages appends the rows of a query of messageColumns to out and
// closes them.
func readMessages(rows pgx.Rows, out []sa.Message) ([]sa.Message, error) {
	defer rows.Close()
	// The scan destinations are declared once: Scan takes their
	// addresses, so declared in the loop each row would allocate them.
	var (
		m       sa.Message
		created int64
	)
	u := &m.Usage
	dest := []any{&m.ID, &m.SessionID, &m.Role, &m.Kind, nil, &m.Summary, binTo{&m.Model},
		&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &created}
	for rows.Next() {
		m = sa.Message{}
		// parts is read as raw bytes, valid until the next row: decoded
		// at once, so no copy is needed.
		raw := rows.RawValues()
		if len(raw) != len(dest) {
			return nil, fmt.Errorf("read messages: %d columns", len(raw))
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw[4], &m.Parts); err != nil {
			return nil, fmt.Errorf("%w: message %d has unreadable parts: %v", sa.ErrCorrupt, m.ID, err)
		}
		m.CreatedAt = fromNanos(created)
		out = append(out, m)
	}
	return out, rows.Err()
}
