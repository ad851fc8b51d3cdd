package transcripts

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// pendingWindows are how many of an OpenCode session's newest messages
// FindPendingCall reads, in turn, before reading the session whole: the
// call it looks for is in the newest reply, so a few messages nearly
// always hold it, and reading them costs what they hold, not what the
// whole session does.
var pendingWindows = []int{4, 64}

// readNewest reads the newest messages of a conversation, at least n of
// the host's messages where the host can start there: an OpenCode session
// is read after its (n+1)th newest message. Other hosts' transcripts, and
// sessions of n messages or fewer, are read whole; whole reports which.
func readNewest(ctx context.Context, t Transcript, n int) (res Result, whole bool, err error) {
	if t.Host != OpenCode {
		res, err = Read(ctx, t, Position{})
		return res, true, err
	}
	var ids []string
	if strings.HasSuffix(t.Path, ".db") {
		ids, err = opencodeNewestDB(ctx, t, n+1)
	} else {
		ids, err = opencodeNewestFiles(t, n+1)
	}
	if err != nil || len(ids) <= n {
		res, err = Read(ctx, t, Position{})
		return res, true, err
	}
	res, err = Read(ctx, t, Position{LastID: ids[n]})
	return res, false, err
}

// opencodeNewestDB returns the ids of a session's newest n messages in
// OpenCode's database, newest first.
func opencodeNewestDB(ctx context.Context, t Transcript, n int) ([]string, error) {
	db, err := openReadOnly(t.Path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id FROM message WHERE session_id = ? ORDER BY id DESC LIMIT ?`, t.SessionID, n)
	if err != nil {
		return nil, fmt.Errorf("read OpenCode messages: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id sql.NullString
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read OpenCode messages: %w", err)
		}
		ids = append(ids, id.String)
	}
	return ids, rows.Err()
}

// opencodeNewestFiles returns the ids of a session's newest n messages in
// OpenCode's JSON storage, newest first.
func opencodeNewestFiles(t Transcript, n int) ([]string, error) {
	storage := filepath.Dir(filepath.Dir(filepath.Dir(t.Path)))
	files, err := filepath.Glob(filepath.Join(storage, "message", t.SessionID, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(files)))
	var ids []string
	for _, f := range files[:min(n, len(files))] {
		ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return ids, nil
}
