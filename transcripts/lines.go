package transcripts

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// rawLine is one complete line of a JSONL transcript.
type rawLine struct {
	data []byte
	no   int64 // 1-based line number in the file
	end  int64 // offset just after its newline
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
		var b [1]byte
		if _, err := f.ReadAt(b[:], from.Offset-1); err != nil || b[0] != '\n' {
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
			lines = append(lines, rawLine{data: l, no: no, end: off})
		}
		data = data[i+1:]
	}
	return lines, nil
}
