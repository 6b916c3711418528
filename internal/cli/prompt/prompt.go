// Package prompt asks the questions of kubectl kudo's generators (package
// new -i, package add), a line each, as KUDO's did: a text with its default
// and its check, a choice among options, a yes or no. It reads lines, so a
// terminal, a pipe or a test answers alike.
package prompt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrNoAnswer is the error of a question asked after the input ended.
var ErrNoAnswer = errors.New("no answer: the input ended")

// Prompter asks on out and reads the answers from in.
type Prompter struct {
	in  *bufio.Reader
	out io.Writer
}

// New asks on out, reading answers from in.
func New(in io.Reader, out io.Writer) *Prompter {
	return &Prompter{in: bufio.NewReader(in), out: out}
}

// Text asks for a text; an empty answer is def. check, if any, refuses an
// answer with the reason, and the question is asked again.
func (p *Prompter) Text(label, def string, check func(string) error) (string, error) {
	for {
		question := label
		if def != "" {
			question += " [" + def + "]"
		}
		answer, err := p.ask(question + ": ")
		if err != nil {
			return "", err
		}
		if answer == "" {
			answer = def
		}
		if check == nil {
			return answer, nil
		}
		if err := check(answer); err != nil {
			_, _ = fmt.Fprintf(p.out, "✗ %v\n", err)
			continue
		}
		return answer, nil
	}
}

// Select asks for one of options, the first the default, by number or by
// text; with add, another text is taken as a new option.
func (p *Prompter) Select(label string, options []string, add bool) (string, error) {
	for {
		_, _ = fmt.Fprintln(p.out, label+":")
		for k, o := range options {
			_, _ = fmt.Fprintf(p.out, "  %d) %s\n", k+1, o)
		}
		question := "Choose 1-" + strconv.Itoa(len(options))
		if add {
			question += ", or type a new one"
		}
		answer, err := p.ask(fmt.Sprintf("%s [%s]: ", question, options[0]))
		if err != nil {
			return "", err
		}
		if answer == "" {
			return options[0], nil
		}
		if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(options) {
			return options[n-1], nil
		}
		if add || slices.Contains(options, answer) {
			return answer, nil
		}
		_, _ = fmt.Fprintf(p.out, "✗ %q is not one of %s\n", answer, strings.Join(options, ", "))
	}
}

// Confirm asks a yes or no question: yes only for y or yes, as KUDO's.
func (p *Prompter) Confirm(label string) (bool, error) {
	answer, err := p.ask(label + " [y/N]: ")
	if err != nil {
		return false, err
	}
	answer = strings.ToLower(answer)
	return answer == "y" || answer == "yes", nil
}

func (p *Prompter) ask(question string) (string, error) {
	_, _ = io.WriteString(p.out, question)
	line, err := p.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			_, _ = fmt.Fprintln(p.out)
			return "", ErrNoAnswer
		}
		return "", err
	}
	return strings.TrimSpace(line), nil
}
