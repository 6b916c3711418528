package engine

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// PlanNames lists the plans, sorted, for messages.
func PlanNames(plans map[string]kudov1beta1.Plan) []string {
	names := make([]string, 0, len(plans))
	for n := range plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MaxProblemsMessage bounds the problems a Ready message lists: a package of
// hundreds of missing objects would otherwise pass the 32,768 characters a
// condition's message may hold, and fail the whole status patch.
const MaxProblemsMessage = 4096

// JoinAtMost joins messages with ", " into at most limit bytes and a count
// of those it left out ("… and 650 more"); the first always shows, cut if it
// alone is longer.
func JoinAtMost(messages []string, limit int) string {
	var b strings.Builder
	for n, m := range messages {
		more := fmt.Sprintf(" … and %d more", len(messages)-n)
		if n > 0 && b.Len()+len(", ")+len(m)+len(more) > limit {
			b.WriteString(more)
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(TruncateMessage(m, limit))
	}
	return b.String()
}

// TruncateMessage cuts s to at most limit bytes, on a rune boundary, saying
// that it did.
func TruncateMessage(s string, limit int) string {
	const cut = " … (cut)"
	if len(s) <= limit {
		return s
	}
	end := max(limit-len(cut), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + cut
}

// MaxStepMessage bounds a step's message, which a phase's and a plan's
// repeat: an error may quote a whole rendered template.
const MaxStepMessage = 4096
