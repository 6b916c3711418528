package task

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestCappedBuffer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		// wrote is what each write reports written; refused, the first
		// write refused, -1 for none.
		wrote   []int
		refused int
		kept    string
	}{
		{name: "under the cap", writes: []string{"abc"}, wrote: []int{3}, refused: -1, kept: "abc"},
		{name: "at the cap", writes: []string{"ab", "cd"}, wrote: []int{2, 2}, refused: -1, kept: "abcd"},
		{name: "over the cap in one write", writes: []string{"abcde"}, wrote: []int{4}, refused: 0, kept: "abcd"},
		{name: "over the cap by a write after it", writes: []string{"abcd", "e", "f"}, wrote: []int{4, 0, 0}, refused: 1, kept: "abcd"},
		{name: "over the cap across writes", writes: []string{"abc", "de"}, wrote: []int{3, 1}, refused: 1, kept: "abcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped := 0
			b := &cappedBuffer{limit: 4, stop: func() { stopped++ }}
			refused := -1
			for i, w := range tc.writes {
				n, err := b.Write([]byte(w))
				if n != tc.wrote[i] {
					t.Errorf("write %d wrote %d bytes, want %d", i, n, tc.wrote[i])
				}
				if err != nil && refused < 0 {
					refused = i
				}
				if err != nil && !errors.Is(err, errTooLarge) {
					t.Errorf("write %d: %v, want errTooLarge", i, err)
				}
			}
			if refused != tc.refused || b.over() != (tc.refused >= 0) || (stopped > 0) != (tc.refused >= 0) {
				t.Errorf("first refused write %d, over %v, stopped %d times; want %d", refused, b.over(), stopped, tc.refused)
			}
			if got := b.String(); got != tc.kept {
				t.Errorf("kept %q, want %q", got, tc.kept)
			}
		})
	}
}

// endless streams a file that never ends, as remotecommand streams
// /dev/zero: a refused write only ends the copy into stdout, and the rest is
// drained (client-go's streamProtocolV2.copyStdout) until the stream is torn
// down. It gives up after 16 MiB, an error saying nothing tore it down.
type endless struct {
	accepted int // bytes stdout took
	tornDown bool
}

func (e *endless) stream(ctx context.Context, stdout, _ io.Writer) error {
	chunk := make([]byte, 32<<10)
	var refused error
	for sent := 0; sent < 16<<20; sent += len(chunk) {
		if err := ctx.Err(); err != nil {
			e.tornDown = true
			return err
		}
		if refused == nil {
			var n int
			n, refused = stdout.Write(chunk)
			e.accepted += n
		}
	}
	return errors.New("16 MiB streamed and the stream was not torn down")
}

// fifo streams a FIFO that no one writes to: nothing, until the stream is
// torn down. It gives up after 5s.
func fifo(ctx context.Context, _, _ io.Writer) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Second):
		return errors.New("5s streamed and the stream was not torn down")
	}
}

// TestReadCappedEndless: a file that never ends costs the limit, and its
// stream is torn down, not drained for ever.
func TestReadCappedEndless(t *testing.T) {
	e := &endless{}
	data, err := readCapped(context.Background(), e.stream, maxPipeFile)
	if !errors.Is(err, errTooLarge) || data != nil {
		t.Errorf("readCapped = %d bytes, %v; want errTooLarge", len(data), err)
	}
	if e.accepted > maxPipeFile || !e.tornDown {
		t.Errorf("the stream wrote %d bytes into a limit of %d, torn down: %v", e.accepted, maxPipeFile, e.tornDown)
	}
}

func TestReadCapped(t *testing.T) {
	const limit = 8
	for _, tc := range []struct {
		name   string
		stream streamFunc
		want   string
		err    string
	}{{
		name: "a file of exactly the limit",
		stream: func(_ context.Context, stdout, _ io.Writer) error {
			_, err := io.WriteString(stdout, "12345678")
			return err
		},
		want: "12345678",
	}, {
		name: "a byte more",
		stream: func(_ context.Context, stdout, _ io.Writer) error {
			_, err := io.WriteString(stdout, "123456789")
			return err
		},
		err: "more bytes than the copy's limit",
	}, {
		name: "cat fails: its stderr is quoted",
		stream: func(_ context.Context, _, stderr io.Writer) error {
			_, _ = io.WriteString(stderr, "cat: can't open '/tmp/out/x': No such file or directory\n")
			return errors.New("command terminated with exit code 1")
		},
		err: "command terminated with exit code 1: cat: can't open '/tmp/out/x': No such file or directory",
	}, {
		name: "of endless stderr, the first KiBs are quoted",
		stream: func(_ context.Context, _, stderr io.Writer) error {
			_, _ = stderr.Write(bytes.Repeat([]byte("e"), maxPipeFile))
			return errors.New("command terminated with exit code 1")
		},
		err: "command terminated with exit code 1: " + strings.Repeat("e", maxStderr),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := readCapped(context.Background(), tc.stream, limit)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if string(data) != tc.want || got != tc.err {
				// Clipped: a message of endless stderr would flood the log.
				t.Errorf("readCapped = %q, %.200s (%d bytes); want %q, %.200s (%d bytes)", data, got, len(got), tc.want, tc.err, len(tc.err))
			}
		})
	}
}
