package transcripts

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// rawLine is one complete line of a JSONL transcript.
type rawLine struct {
	data  []byte
	no    int64  // 1-based line number in the file
	end   int64  // offset just after its newline
	check string // lineCheck of the bytes before end
}

// at is the position just after the line.
func (l rawLine) at(lastID string) Position {
	return Position{Offset: l.end, Line: l.no, LastID: lastID, Check: l.check}
}

// checkLen is how many bytes before a position its Check covers, at most.
const checkLen = 64

// lineCheck sums the last bytes of a line, newline included.
func lineCheck(tail []byte) string {
	h := fnv.New64a()
	h.Write(tail)
	return fmt.Sprintf("%d:%x", len(tail), h.Sum64())
}

// readLines reads the complete lines after from. A last line without its
// newline is being written: it is left for the next read. The file is
// opened for reading only.
func readLines(path string, from Position) ([]rawLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	if from.Offset > 0 {
		// The byte before the position must still be the newline that
		// ended the last line taken; otherwise the file was rewritten.
		n := int64(1)
		var want string
		if from.Check != "" {
			if _, err := fmt.Sscanf(from.Check, "%d:%s", &n, &want); err != nil || n < 1 || n > checkLen || n > from.Offset {
				return nil, fmt.Errorf("%w: unreadable check %q", ErrDiverged, from.Check)
			}
		}
		b := make([]byte, n)
		if _, err := f.ReadAt(b, from.Offset-n); err != nil || b[n-1] != '\n' || from.Check != "" && lineCheck(b) != from.Check {
			return nil, fmt.Errorf("%w: %s is not the file it was at the last import (byte %d)", ErrDiverged, path, from.Offset)
		}
		if _, err := f.Seek(from.Offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read transcript: %w", err)
		}
	}
	// Size the buffer from the file: the transcript is usually read whole.
	var data []byte
	if fi, err := f.Stat(); err == nil && fi.Size() > from.Offset {
		data = make([]byte, 0, fi.Size()-from.Offset+512)
	}
	buf := bytes.NewBuffer(data)
	_, err = buf.ReadFrom(f)
	data = buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	var lines []rawLine
	off, no := from.Offset, from.Line
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // partial last line
		}
		no++
		off += int64(i) + 1
		if l := bytes.TrimSpace(data[:i]); len(l) > 0 {
			tail := data[max(0, i+1-checkLen) : i+1]
			lines = append(lines, rawLine{data: l, no: no, end: off, check: lineCheck(tail)})
		}
		data = data[i+1:]
	}
	return lines, nil
}
