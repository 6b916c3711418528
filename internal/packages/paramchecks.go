package packages

import (
	"fmt"
	"strings"
	"unicode"
)

// ParamCheckNames are the values of package verify --param-checks, KUDO's:
// each adds a rule of how parameters and groups are described, as warnings.
var ParamCheckNames = []string{"display", "hint", "desc", "type", "hasgroup", "groups", "all"}

// ParamChecks are the checks --param-checks asks for.
type ParamChecks struct {
	DisplayName, Hint, Description, Type, HasGroup, Groups bool
}

// ParseParamChecks reads --param-checks' values.
func ParseParamChecks(names []string) (ParamChecks, error) {
	var c ParamChecks
	for _, name := range names {
		switch name {
		case "display":
			c.DisplayName = true
		case "hint":
			c.Hint = true
		case "desc":
			c.Description = true
		case "type":
			c.Type = true
		case "hasgroup":
			c.HasGroup = true
		case "groups":
			c.Groups = true
		case "all":
			c = ParamChecks{DisplayName: true, Hint: true, Description: true, Type: true, HasGroup: true, Groups: true}
		default:
			return c, fmt.Errorf("unknown parameter check: %s, must be one of [%s]", name, strings.Join(ParamCheckNames, " "))
		}
	}
	return c, nil
}

// paramChecks warns, in KUDO's words, of parameters and groups described
// otherwise than the checks ask.
func (v *verifier) paramChecks(c ParamChecks) {
	type problem struct {
		check kudoCheck
		text  string
	}
	for i, p := range v.p.Params.Parameters {
		field := fmt.Sprintf("parameters[%d] %s", i, p.Name)
		var problems []problem
		if c.Description {
			problems = append(problems, problem{kudoParamDescriptions, describedAsASentence(p.Description)})
		}
		if c.Hint {
			problems = append(problems, problem{kudoParamHints, hintEndsWithAPeriod(p.Hint)})
		}
		if c.DisplayName {
			problems = append(problems, problem{kudoParamDisplayNames, displayNameIsATitle(p.DisplayName)})
		}
		if c.HasGroup && p.Group == "" {
			problems = append(problems, problem{kudoParamGroups, "has no group"})
		}
		if c.Type && p.Type == "" {
			problems = append(problems, problem{kudoParamTypes, "has no explicit type assigned"})
		}
		for _, pr := range problems {
			if pr.text != "" {
				v.r.warnf(ParamsFileName, field, "%s", pr.text)
				v.r.kudoSaid(pr.check, "parameter %q %s", p.Name, pr.text)
			}
		}
	}
	if !c.Groups {
		return
	}
	for i, g := range v.p.Params.Groups {
		field := fmt.Sprintf("groups[%d] %s", i, g.Name)
		for _, text := range []string{displayNameIsATitle(g.DisplayName), describedAsASentence(g.Description)} {
			if text != "" {
				v.r.warnf(ParamsFileName, field, "%s", text)
				v.r.kudoSaid(kudoGroups, "parameter group %q %s", g.Name, text)
			}
		}
	}
}

func displayNameIsATitle(name string) string {
	switch {
	case name == "":
		return "has no displayName"
	case strings.HasSuffix(name, ":"):
		return "has a displayName ending with ':'"
	case !startsUpper(name):
		return "has a displayName that does not start with a capital letter"
	}
	return ""
}

func describedAsASentence(description string) string {
	switch {
	case description == "":
		return "has no description"
	case !strings.ContainsAny(description[len(description)-1:], ".!?)"):
		return "has a description not ending with one of '.!?)'"
	case !startsUpper(description):
		return "has a description that does not start with a capital letter"
	}
	return ""
}

func hintEndsWithAPeriod(hint string) string {
	switch {
	case hint == "":
		return "has no hint"
	case !strings.HasSuffix(hint, "."):
		return "has a hint not ending with a '.'"
	}
	return ""
}

// startsUpper is KUDO's test: the first rune is upper case, or no letter.
func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r) || !unicode.IsLetter(r)
	}
	return true
}
