package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
)

// cliReference lists every command of the capstan binary (the CLI is the
// same program under the name argocd), with its usage and flags.
func cliReference() (string, error) {
	root := commands.NewRoot()
	var b strings.Builder
	b.WriteString("# CLI reference\n\n")
	b.WriteString("Every command of `capstan`. Installed or linked as `argocd`, the same binary answers Argo CD's command names; " +
		"the flags every command takes (`--server`, `--auth-token`, `--grpc-web`, …) are listed once, under `capstan`.\n\n")
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	b.WriteString("## Commands\n\n")
	for _, c := range all {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	for _, c := range all {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", c.CommandPath(), strings.TrimSpace(c.Short))
		if long := strings.TrimSpace(c.Long); long != "" && long != strings.TrimSpace(c.Short) {
			b.WriteString(long + "\n\n")
		}
		fmt.Fprintf(&b, "```\n%s\n```\n", c.UseLine())
		if c.HasExample() {
			fmt.Fprintf(&b, "\nExamples:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
		}
		flags := c.LocalNonPersistentFlags()
		if c == root {
			flags = c.PersistentFlags()
		}
		if usage := strings.TrimRight(flags.FlagUsagesWrapped(0), "\n"); usage != "" {
			fmt.Fprintf(&b, "\nFlags:\n\n```\n%s\n```\n", usage)
		}
	}
	return b.String(), nil
}

// anchor is the heading anchor GitHub and most renderers make of text.
func anchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
