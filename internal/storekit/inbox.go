package storekit

import (
	"context"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// InboxTx is what a store's write transaction offers SendTaskMessage and
// DeliverTaskMessages, each in the store's SQL.
type InboxTx interface {
	Clock
	// LockTask: see InputTx.
	LockTask(ctx context.Context, id string) (sa.Task, error)
	// InsertMessages: see FinishTx.
	InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error)
	// RecordTaskChange records a change of kind about task t carrying
	// data.
	RecordTaskChange(ctx context.Context, kind sa.ChangeKind, t sa.Task, data any) error
	// InsertTaskMessage, WaitingMessages, MarkDelivered and
	// MarkUndelivered: SharedTx's statements.
	InsertTaskMessage(ctx context.Context, m sa.TaskMessage) (int64, error)
	WaitingMessages(ctx context.Context, taskID string) ([]sa.TaskMessage, error)
	MarkDelivered(ctx context.Context, taskID string, seq, messageID, now int64) error
	MarkUndelivered(ctx context.Context, taskID, reason string) (int64, error)
}

// SendTaskMessage stores a message for an active task, with the task
// held: its ending comes before (and the message is refused) or after
// (and FinishTask sees it waiting).
func (o Ops[T]) SendTaskMessage(ctx context.Context, m sa.TaskMessage) (sa.TaskMessage, error) {
	if err := m.Validate(); err != nil {
		return sa.TaskMessage{}, err
	}
	if !Storable(m.TaskID) {
		return sa.TaskMessage{}, fmt.Errorf("send to task %s: %w", m.TaskID, sa.ErrNotFound)
	}
	m.DeliveredAt, m.MessageID, m.Undelivered = nil, 0, ""
	err := o.write(ctx, func(tx T) error {
		t, err := tx.LockTask(ctx, m.TaskID)
		if err != nil {
			return err
		}
		if !t.Status.Active() {
			return &sa.TaskEndedError{TaskID: t.ID, Status: t.Status}
		}
		m.CreatedAt = tx.Now()
		if m.Seq, err = tx.InsertTaskMessage(ctx, m); err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
		return tx.RecordTaskChange(ctx, sa.ChangeTaskMessage, t, m)
	})
	if err != nil {
		return sa.TaskMessage{}, fmt.Errorf("send to task %s: %w", sa.ShortID(m.TaskID), err)
	}
	return m, nil
}

// DeliverTaskMessages appends a task's waiting messages to its session
// and marks them delivered, in one transaction: a message is in the
// session exactly once.
func (o Ops[T]) DeliverTaskMessages(ctx context.Context, taskID string, render func(sa.TaskMessage) sa.Message) ([]sa.Message, error) {
	if !Storable(taskID) {
		return nil, nil
	}
	var stored []sa.Message
	err := o.write(ctx, func(tx T) error {
		waiting, err := tx.WaitingMessages(ctx, taskID)
		if err != nil || len(waiting) == 0 {
			return err
		}
		msgs := make([]sa.Message, len(waiting))
		for i, m := range waiting {
			if msgs[i] = render(m); msgs[i].Validate() != nil {
				return fmt.Errorf("message %d: %w", m.Seq, msgs[i].Validate())
			}
		}
		if stored, err = tx.InsertMessages(ctx, taskID, "", msgs); err != nil {
			return err
		}
		now := tx.Now().UnixNano()
		for i, m := range waiting {
			if err := tx.MarkDelivered(ctx, taskID, m.Seq, stored[i].ID, now); err != nil {
				return fmt.Errorf("mark delivered: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("deliver messages to task %s: %w", sa.ShortID(taskID), err)
	}
	return stored, nil
}

// settleInbox is FinishTask's rule for the messages a task was sent: a
// task does not complete while one waits (its run delivers it first),
// and one that ends otherwise marks them undelivered, with its status.
func settleInbox(ctx context.Context, tx FinishTx, ended sa.Task) error {
	if ended.Status == sa.TaskCompleted {
		waiting, err := tx.WaitingMessages(ctx, ended.ID)
		if err != nil {
			return fmt.Errorf("read waiting messages: %w", err)
		}
		if len(waiting) > 0 {
			return fmt.Errorf("task %s: %d: %w", sa.ShortID(ended.ID), len(waiting), sa.ErrUndelivered)
		}
		return nil
	}
	reason := "the task failed first"
	if ended.Status == sa.TaskCancelled {
		reason = "the task was cancelled first"
	}
	if _, err := tx.MarkUndelivered(ctx, ended.ID, reason); err != nil {
		return fmt.Errorf("mark messages undelivered: %w", err)
	}
	return nil
}

// InsertTaskMessage stores a message as its task's next, returning its
// seq.
func (tx SharedTx) InsertTaskMessage(ctx context.Context, m sa.TaskMessage) (int64, error) {
	var seq int64
	err := tx.c.ScanShared(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM task_messages WHERE task_id = $1`, []any{m.TaskID}, &seq)
	if err != nil {
		return 0, err
	}
	_, err = tx.c.ExecShared(ctx, `INSERT INTO task_messages (task_id, seq, sender, body, created_at) VALUES ($1, $2, $3, $4, $5)`,
		m.TaskID, seq, tx.c.Raw(m.From), tx.c.Raw(m.Text), m.CreatedAt.UnixNano())
	return seq, err
}

// WaitingMessages reads a task's messages that wait for delivery, in
// order.
func (tx SharedTx) WaitingMessages(ctx context.Context, taskID string) ([]sa.TaskMessage, error) {
	return taskMessages(ctx, tx.c, taskID, true)
}

// MarkDelivered records a message's delivery as session message
// messageID.
func (tx SharedTx) MarkDelivered(ctx context.Context, taskID string, seq, messageID, now int64) error {
	_, err := tx.c.ExecShared(ctx, `UPDATE task_messages SET delivered_at = $1, message_id = $2 WHERE task_id = $3 AND seq = $4`,
		now, messageID, taskID, seq)
	return err
}

// MarkUndelivered marks a task's waiting messages undelivered, for reason.
func (tx SharedTx) MarkUndelivered(ctx context.Context, taskID, reason string) (int64, error) {
	return tx.c.ExecShared(ctx, `UPDATE task_messages SET undelivered = $1 WHERE task_id = $2 AND delivered_at IS NULL AND undelivered IS NULL`,
		reason, taskID)
}

// TaskMessages returns every message sent to a task, oldest first.
func (s SharedReads) TaskMessages(ctx context.Context, taskID string) ([]sa.TaskMessage, error) {
	if !Storable(taskID) {
		return nil, nil
	}
	out, err := taskMessages(ctx, s.db, taskID, false)
	if err != nil {
		return nil, fmt.Errorf("read messages of task %s: %w", sa.ShortID(taskID), err)
	}
	return out, nil
}

// WaitingTaskMessages counts a task's messages that wait for delivery.
func (s SharedReads) WaitingTaskMessages(ctx context.Context, taskID string) (int, error) {
	if !Storable(taskID) {
		return 0, nil
	}
	var n int
	err := s.db.ScanShared(ctx, `SELECT COUNT(*) FROM task_messages WHERE task_id = $1 AND delivered_at IS NULL AND undelivered IS NULL`,
		[]any{taskID}, &n)
	if err != nil {
		return 0, fmt.Errorf("count waiting messages of task %s: %w", sa.ShortID(taskID), err)
	}
	return n, nil
}

// taskMessages reads a task's messages, only those that wait if waiting.
func taskMessages(ctx context.Context, r Reader, taskID string, waiting bool) ([]sa.TaskMessage, error) {
	var (
		out              []sa.TaskMessage
		m                sa.TaskMessage
		created          int64
		delivered, msgID *int64
		undelivered      *string
	)
	query := `SELECT task_id, seq, sender, body, created_at, delivered_at, message_id, undelivered FROM task_messages WHERE task_id = $1`
	if waiting {
		query += ` AND delivered_at IS NULL AND undelivered IS NULL`
	}
	err := r.EachShared(ctx, query+` ORDER BY seq`, []any{taskID},
		[]any{&m.TaskID, &m.Seq, r.RawDest(&m.From), r.RawDest(&m.Text), &created, &delivered, &msgID, &undelivered},
		func() error {
			m.CreatedAt, m.DeliveredAt = time.Unix(0, created).UTC(), nanosTime(delivered)
			m.MessageID, m.Undelivered = 0, ""
			if msgID != nil {
				m.MessageID = *msgID
			}
			if undelivered != nil {
				m.Undelivered = *undelivered
			}
			out = append(out, m)
			return nil
		})
	return out, err
}
