package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// stage is what the Dockerfile's final stage makes of its base: the offline
// build writes the same image from it.
type stage struct {
	from      string            // the base image FROM names
	base      base              // its local stand-in
	additions []addition        // what the stage adds to the base's files, in order
	binaries  map[string]string // the builder stage's files it copies, by base name: what --binary names
	config    v1.Config         // the base's config with the stage's instructions applied
	cmdSet    bool              // a CMD in this stage, which ENTRYPOINT keeps
}

// addition is what one instruction adds to the image's files: a COPY's
// sources at dest, or, with no sources, the directory a WORKDIR creates.
type addition struct {
	in      instruction
	builder bool     // the sources are the builder stage's binaries, else the build context's files
	srcs    []string // cleaned; relative to the context's root for the context's files
	dest    string   // absolute
	into    bool     // dest is a directory even if the image lacks it: it ends in a slash, or several sources go there
	owner   owner    // of what it creates: --chown's, else root
}

// owner is a numeric user and group.
type owner struct{ uid, gid int }

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	line    int // where it starts, for errors
	keyword string
	args    string
}

func (in instruction) String() string { return in.keyword + " " + in.args }

func (in instruction) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: %s: %s", in.line, in.keyword, fmt.Sprintf(format, a...))
}

// parseDockerfile reads the final stage of a Dockerfile. The earlier stages
// are the builder, which the host's builds replace; in the final stage, any
// instruction the offline build does not apply is an error, so the
// Dockerfile and the image cannot silently part.
func parseDockerfile(src string, bases map[string]base) (stage, error) {
	ins := instructions(src)
	var froms []int
	for i, in := range ins {
		if in.keyword == "FROM" {
			froms = append(froms, i)
		}
	}
	if len(froms) == 0 {
		return stage{}, errors.New("no FROM instruction")
	}
	// Only ARGs before the first FROM are in scope in a FROM line.
	args := map[string]string{}
	for _, in := range ins[:froms[0]] {
		if in.keyword != "ARG" {
			return stage{}, in.errorf("only ARG may come before the first FROM")
		}
		if !strings.Contains(in.args, "=") {
			continue // no default: a FROM using it fails below
		}
		pairs, err := keyValues(in.args)
		if err != nil {
			return stage{}, in.errorf("%v", err)
		}
		for _, kv := range pairs {
			args[kv[0]] = kv[1]
		}
	}
	// The stages COPY --from may name; Docker's stage names ignore case.
	builders := map[string]bool{}
	for _, i := range froms[:len(froms)-1] {
		if f := strings.Fields(ins[i].args); len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
			builders[strings.ToLower(f[len(f)-1])] = true
		}
	}

	last := froms[len(froms)-1]
	from := ins[last]
	f := strings.Fields(from.args)
	if len(f) != 1 && (len(f) != 3 || !strings.EqualFold(f[1], "AS")) {
		return stage{}, from.errorf("want FROM <image> [AS <name>], got %q", from.args)
	}
	ref, err := expand(f[0], args)
	if err != nil {
		return stage{}, from.errorf("%v", err)
	}
	b, ok := bases[ref]
	if !ok {
		known := strings.Join(slices.Sorted(maps.Keys(bases)), ", ")
		return stage{}, from.errorf("no local stand-in for the base %s in hack/image (it has %s)", ref, known)
	}
	st := stage{from: ref, base: b, binaries: map[string]string{}, config: b.config}
	st.config.Env = slices.Clone(b.config.Env)
	for _, in := range ins[last+1:] {
		if err := st.apply(in, builders); err != nil {
			return stage{}, err
		}
	}
	if !slices.ContainsFunc(st.additions, func(a addition) bool { return len(a.srcs) > 0 }) {
		return stage{}, from.errorf("the final stage copies nothing: the image would hold no program or files of its own")
	}
	return st, nil
}

// apply applies one instruction of the final stage.
func (st *stage) apply(in instruction, builders map[string]bool) error {
	if in.args == "" {
		return in.errorf("no arguments")
	}
	// Docker substitutes variables in these; the offline build does not.
	if strings.Contains(in.args, "$") {
		return in.errorf("variables are not supported by the offline image build (hack/image)")
	}
	switch in.keyword {
	case "WORKDIR":
		st.config.WorkingDir = st.resolve(in.args)
		st.additions = append(st.additions, addition{in: in, dest: st.config.WorkingDir})
	case "COPY":
		return st.addCopy(in, builders)
	case "USER":
		st.config.User = in.args
	case "ENTRYPOINT":
		if err := json.Unmarshal([]byte(in.args), &st.config.Entrypoint); err != nil {
			return in.errorf("want the JSON form: the base has no shell")
		}
		// As in Docker: a new entrypoint drops the command the base gave.
		if !st.cmdSet {
			st.config.Cmd = nil
		}
	case "CMD":
		if err := json.Unmarshal([]byte(in.args), &st.config.Cmd); err != nil {
			return in.errorf("want the JSON form: the base has no shell")
		}
		st.cmdSet = true
	case "ENV", "LABEL":
		pairs, err := keyValues(in.args)
		if err != nil {
			return in.errorf("%v", err)
		}
		for _, kv := range pairs {
			if in.keyword == "ENV" {
				st.config.Env = setEnv(st.config.Env, kv[0], kv[1])
				continue
			}
			if st.config.Labels == nil {
				st.config.Labels = map[string]string{}
			}
			st.config.Labels[kv[0]] = kv[1]
		}
	default:
		return in.errorf("not supported by the offline image build (hack/image): support it there or keep it out of the final stage")
	}
	return nil
}

// addCopy reads COPY [--from=<builder stage>] [--chown=<uid>[:<gid>]]
// <src>... <dest>: from the builder stage, whose binaries the host builds,
// or from the build context.
func (st *stage) addCopy(in instruction, builders map[string]bool) error {
	words := strings.Fields(in.args)
	a := addition{in: in}
	for ; len(words) > 0 && strings.HasPrefix(words[0], "--"); words = words[1:] {
		if chown, ok := strings.CutPrefix(words[0], "--chown="); ok {
			o, err := parseOwner(chown)
			if err != nil {
				return in.errorf("%v", err)
			}
			a.owner = o
			continue
		}
		from, ok := strings.CutPrefix(words[0], "--from=")
		if !ok {
			return in.errorf("%s is not supported by the offline image build (hack/image)", words[0])
		}
		if !builders[strings.ToLower(from)] {
			return in.errorf("--from=%s is not an earlier stage named with AS: the host builds only those stages' binaries", from)
		}
		a.builder = true
	}
	if len(words) < 2 || strings.HasPrefix(words[0], "[") {
		return in.errorf("want COPY [--from=<builder stage>] [--chown=<uid>[:<gid>]] <src>... <dest>")
	}
	dest := words[len(words)-1]
	a.srcs = words[:len(words)-1]
	a.dest = st.resolve(dest)
	a.into = strings.HasSuffix(dest, "/") || path.Base(dest) == "." || len(a.srcs) > 1
	for i, src := range a.srcs {
		if strings.ContainsAny(src, "*?[") {
			return in.errorf("%s: wildcards are not supported by the offline image build (hack/image)", src)
		}
		if a.builder {
			a.srcs[i] = path.Clean(src)
			name := path.Base(a.srcs[i])
			if other, ok := st.binaries[name]; ok && other != a.srcs[i] {
				return in.errorf("%s and %s share the name --binary %s=<path> gives", other, a.srcs[i], name)
			}
			st.binaries[name] = a.srcs[i]
			continue
		}
		// Docker reads a context path as relative to the context's root.
		rel := strings.TrimPrefix(path.Clean(src), "/")
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return in.errorf("%s is outside the build context", src)
		}
		a.srcs[i] = cmp.Or(rel, ".")
	}
	st.additions = append(st.additions, a)
	return nil
}

// parseOwner reads --chown's <uid>[:<gid>]: numbers only, as names would need
// the image's /etc/passwd; a lone uid is the gid too, as in Docker.
func parseOwner(s string) (owner, error) {
	user, group, hasGroup := strings.Cut(s, ":")
	if !hasGroup {
		group = user
	}
	uid, errUser := strconv.Atoi(user)
	gid, errGroup := strconv.Atoi(group)
	if errUser != nil || errGroup != nil || uid < 0 || gid < 0 {
		return owner{}, fmt.Errorf("--chown=%s: want <uid>[:<gid>] as numbers (names are not supported by the offline image build)", s)
	}
	return owner{uid: uid, gid: gid}, nil
}

// resolve makes p absolute against the working directory, as Docker does.
func (st *stage) resolve(p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join("/", st.config.WorkingDir, p)
}

// instructions splits a Dockerfile into instructions: comments and blank
// lines dropped, lines ending in a backslash joined with the next.
func instructions(src string) []instruction {
	var out []instruction
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		text := strings.TrimSpace(lines[i])
		if text == "" || text[0] == '#' {
			continue
		}
		start := i + 1
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			// Docker skips these within a continued instruction too.
			next := strings.TrimSpace(lines[i])
			if next == "" || next[0] == '#' {
				continue
			}
			text = strings.TrimSuffix(text, `\`) + next
		}
		keyword := strings.Fields(text)[0]
		args := strings.TrimSpace(text[len(keyword):])
		out = append(out, instruction{line: start, keyword: strings.ToUpper(keyword), args: args})
	}
	return out
}

// expand substitutes $NAME and ${NAME} from vars; an unknown name (or a
// ${NAME:-default} form, which os.Expand does not know) is an error rather
// than the empty string.
func expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := os.Expand(s, func(k string) string {
		v, ok := vars[k]
		if !ok {
			missing = append(missing, k)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no ARG with a default before the first FROM gives %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// keyValues reads the key=value pairs of ENV and LABEL: words split on
// blanks outside quotes, quotes and backslash escapes removed.
func keyValues(s string) ([][2]string, error) {
	var words []string
	var w strings.Builder
	var quote rune
	inWord, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		words = append(words, w.String())
	}
	pairs := make([][2]string, 0, len(words))
	for _, word := range words {
		k, v, ok := strings.Cut(word, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("want key=value, got %q (the legacy `key value` form is not supported)", word)
		}
		pairs = append(pairs, [2]string{k, v})
	}
	return pairs, nil
}

// setEnv sets key in a KEY=value list, replacing an earlier value.
func setEnv(env []string, key, value string) []string {
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			env[i] = key + "=" + value
			return env
		}
	}
	return append(env, key+"="+value)
}
