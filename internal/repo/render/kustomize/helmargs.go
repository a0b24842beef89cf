package kustomize

import (
	"fmt"
	"slices"
	"strings"
)

// helmCommand is a parsed helm command line.
type helmCommand struct {
	verb       string
	positional []string
	flags      map[string]string   // flags with one value
	lists      map[string][]string // flags given once per value
	switches   map[string]bool
}

// helmVerb is what a helm command accepts: the command lines Kustomize's
// chart inflation writes, and nothing else.
type helmVerb struct {
	positional    [2]int // at least, at most
	flags, lists  []string
	switches      []string
	unsupportedBy map[string]string
}

var helmVerbs = map[string]helmVerb{
	"version": {switches: []string{"--short"}},
	"pull": {positional: [2]int{1, 1}, flags: []string{"--untardir", "--repo", "--version"},
		switches: []string{"--untar", "--devel"}},
	"template": {positional: [2]int{1, 2}, flags: []string{"--namespace", "--kube-version", "--name-template"},
		lists:         []string{"-f", "--api-versions"},
		switches:      []string{"--generate-name", "--include-crds", "--skip-tests", "--no-hooks", "--debug", "--devel"},
		unsupportedBy: map[string]string{"--name-template": "give the chart a releaseName"}},
}

// parseHelmArgs reads a command line strictly: known flags only, each
// flag's value the next argument whatever it looks like.
func parseHelmArgs(args []string) (*helmCommand, error) {
	verb, ok := helmVerbs[args[0]]
	if !ok {
		return nil, fmt.Errorf("unknown command %q for helm (Capstan serves version, pull and template for Kustomize)", args[0])
	}
	cmd := &helmCommand{verb: args[0], flags: map[string]string{}, lists: map[string][]string{}, switches: map[string]bool{}}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case !strings.HasPrefix(a, "-"):
			cmd.positional = append(cmd.positional, a)
		case slices.Contains(verb.switches, a):
			cmd.switches[a] = true
		case slices.Contains(verb.flags, a) || slices.Contains(verb.lists, a):
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			if why, ok := verb.unsupportedBy[a]; ok {
				return nil, fmt.Errorf("%s is not supported: %s", a, why)
			}
			i++
			if slices.Contains(verb.lists, a) {
				cmd.lists[a] = append(cmd.lists[a], args[i])
			} else {
				cmd.flags[a] = args[i]
			}
		default:
			return nil, fmt.Errorf("unknown flag: %s", a)
		}
	}
	low, high := verb.positional[0], verb.positional[1]
	if cmd.verb == "template" && !cmd.switches["--generate-name"] {
		low = 2 // a release name, then the chart
	}
	if n := len(cmd.positional); n < low || n > high {
		return nil, fmt.Errorf("%q takes %d to %d arguments, got %d", cmd.verb, low, high, n)
	}
	return cmd, nil
}
