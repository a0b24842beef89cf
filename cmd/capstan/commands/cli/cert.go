package cli

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/settings"
)

// maxInput bounds what a command reads from a file or stdin.
const maxInput = 16 << 20

// readInput reads a --from file, or stdin after printing prompt.
func readInput(cmd *cobra.Command, from, what, prompt string) ([]byte, error) {
	var r io.Reader = cmd.InOrStdin()
	if from != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "Reading %s from file '%s'\n", what, from)
		f, err := os.Open(from)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	} else if prompt != "" {
		fmt.Fprintln(cmd.OutOrStdout(), prompt)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s is over %d bytes", what, maxInput)
	}
	return data, err
}

func newCertCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "cert", Short: "Manage the TLS certificates and SSH known host keys repositories are checked against"}
	cmd.AddCommand(newCertAddTLSCommand(f), newCertAddSSHCommand(f), newCertRmCommand(f), newCertListCommand(f))
	return cmd
}

func newCertAddTLSCommand(f *clientFlags) *cobra.Command {
	var from string
	var upsert bool
	cmd := &cobra.Command{
		Use:     "add-tls SERVERNAME",
		Short:   "Trust TLS certificates (PEM) for the repository server SERVERNAME",
		Example: "  capstan cert add-tls git.example.com --from ca.pem\n  cat ca.pem | capstan cert add-tls git.example.com --upsert",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			data, err := readInput(cmd, from, "TLS certificate data in PEM format", "Enter TLS certificate data in PEM format. Press CTRL-D when finished.")
			if err != nil {
				return err
			}
			blocks, err := pemBlocks(data)
			if err != nil {
				return err
			}
			if len(blocks) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No valid certificates have been detected in the stream.")
				return nil
			}
			req := apiwire.CertificateList{Items: []settings.Certificate{{ServerName: args[0], CertType: settings.CertTypeHTTPS, CertData: bytes.Join(blocks, nil)}}}
			var created apiwire.CertificateList
			if err := c.Do(cmd.Context(), "POST", apiclient.Path("/api/v1/certificates").With(url.Values{"upsert": {strconv.FormatBool(upsert)}}), req, &created); err != nil {
				return fmt.Errorf("adding TLS certificates for %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created entry with %d PEM certificates for repository server %s\n", len(created.Items), args[0])
			return nil
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "read the PEM data from this file (default: stdin)")
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace the server's certificates when they differ")
	return cmd
}

// pemBlocks returns the certificate blocks of PEM data, each checked to
// be a certificate and each subject once.
func pemBlocks(data []byte) ([][]byte, error) {
	var blocks [][]byte
	subjects := map[string]bool{}
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return blocks, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("invalid certificate in the input: %w", err)
		}
		if subjects[cert.Subject.String()] {
			continue
		}
		subjects[cert.Subject.String()] = true
		blocks = append(blocks, pem.EncodeToMemory(b))
	}
}

func newCertAddSSHCommand(f *clientFlags) *cobra.Command {
	var from string
	var batch, upsert bool
	cmd := &cobra.Command{
		Use:     "add-ssh --batch",
		Short:   "Trust SSH host keys, read as known_hosts lines",
		Example: "  ssh-keyscan git.example.com | capstan cert add-ssh --batch\n  capstan cert add-ssh --batch --from known_hosts --upsert",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			if !batch {
				return errors.New("you need to specify --batch or specify --help for usage instructions")
			}
			data, err := readInput(cmd, from, "SSH known hosts entries", "Enter SSH known hosts entries, one per line. Press CTRL-D when finished.")
			if err != nil {
				return err
			}
			certs, err := knownHostsCertificates(data)
			if err != nil {
				return err
			}
			if len(certs) == 0 {
				return errors.New("no valid SSH known hosts data found")
			}
			var created apiwire.CertificateList
			if err := c.Do(cmd.Context(), "POST", apiclient.Path("/api/v1/certificates").With(url.Values{"upsert": {strconv.FormatBool(upsert)}}), apiwire.CertificateList{Items: certs}, &created); err != nil {
				return fmt.Errorf("adding SSH known hosts: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully created %d SSH known host entries\n", len(created.Items))
			return nil
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "read the known hosts from this file (default: stdin)")
	cmd.Flags().BoolVar(&batch, "batch", false, "read known_hosts lines (required)")
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace a host's key of the same type when it differs")
	return cmd
}

// knownHostsCertificates reads known_hosts lines, one certificate per
// host name of each line; hashed host names cannot be stored.
func knownHostsCertificates(data []byte) ([]settings.Certificate, error) {
	var certs []settings.Certificate
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		_, hosts, key, _, _, err := ssh.ParseKnownHosts([]byte(line))
		if err != nil || len(fields) < 3 {
			return nil, fmt.Errorf("invalid known hosts line %q: %v", strings.TrimSpace(line), err)
		}
		for _, h := range hosts {
			certs = append(certs, settings.Certificate{ServerName: h, CertType: settings.CertTypeSSH, CertSubType: key.Type(), CertData: []byte(fields[2])})
		}
	}
	return certs, nil
}

func newCertRmCommand(f *clientFlags) *cobra.Command {
	var certType, certSubType string
	cmd := &cobra.Command{
		Use:     "rm REPOSERVER",
		Short:   "Remove the certificates and host keys of the servers a glob pattern matches",
		Example: "  capstan cert rm git.example.com --cert-type https\n  capstan cert rm '*.example.com' --cert-type ssh --cert-sub-type ssh-rsa",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			// A lone * would remove everything: ask for a real pattern.
			if args[0] == "*" {
				return errors.New("a single wildcard is not allowed as REPOSERVER name")
			}
			if !f.confirm(cmd, false, fmt.Sprintf("Are you sure you want to remove all certificates for '%s'? [y/n] ", args[0])) {
				fmt.Fprintf(cmd.OutOrStdout(), "The command to remove all certificates for '%s' was cancelled.\n", args[0])
				return nil
			}
			q := url.Values{"hostNamePattern": {args[0]}, "certType": {certType}, "certSubType": {certSubType}}
			var removed apiwire.CertificateList
			if err := c.Do(cmd.Context(), "DELETE", apiclient.Path("/api/v1/certificates").With(q), nil, &removed); err != nil {
				return fmt.Errorf("removing certificates for %s: %w", args[0], err)
			}
			if len(removed.Items) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No certificates were removed (none matched the given pattern)")
			}
			for _, r := range removed.Items {
				fmt.Fprintf(cmd.OutOrStdout(), "Removed cert for '%s' of type '%s' (subtype '%s')\n", r.ServerName, r.CertType, r.CertSubType)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&certType, "cert-type", "", "only remove certificates of this type (ssh, https)")
	cmd.Flags().StringVar(&certSubType, "cert-sub-type", "", "only remove keys of this SSH key type")
	return cmd
}

func newCertListCommand(f *clientFlags) *cobra.Command {
	var output, sortBy, certType, pattern string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the trusted certificates and host keys",
		Example: "  capstan cert list\n  capstan cert list --cert-type ssh --hostname-pattern '*.example.com' --sort hostname",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			if certType != "" && certType != "ssh" && certType != "https" {
				return errors.New("cert-type must be either ssh or https")
			}
			q := url.Values{"hostNamePattern": {pattern}, "certType": {certType}}
			var list apiwire.CertificateList
			if err := c.Do(cmd.Context(), "GET", apiclient.Path("/api/v1/certificates").With(q), nil, &list); err != nil {
				return fmt.Errorf("listing certificates: %w", err)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), list.Items, output)
			}
			switch sortBy {
			case "hostname", "":
				slices.SortStableFunc(list.Items, func(a, b settings.Certificate) int { return strings.Compare(a.ServerName, b.ServerName) })
			case "type":
				slices.SortStableFunc(list.Items, func(a, b settings.Certificate) int { return strings.Compare(string(a.CertType), string(b.CertType)) })
			default:
				return fmt.Errorf("unknown sort order %q: use hostname or type", sortBy)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "HOSTNAME\tTYPE\tSUBTYPE\tINFO")
			for _, c := range list.Items {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ServerName, c.CertType, c.CertSubType, c.CertInfo)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: json, yaml or wide")
	cmd.Flags().StringVar(&sortBy, "sort", "", "sort order of the wide output: hostname or type")
	cmd.Flags().StringVar(&certType, "cert-type", "", "only certificates of this type: ssh or https")
	cmd.Flags().StringVar(&pattern, "hostname-pattern", "", "only hosts matching this glob pattern")
	return cmd
}
