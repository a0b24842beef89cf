package notifications

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// emailOptions are service.email[.<name>]'s fields.
type emailOptions struct {
	Host               string `json:"host"`
	Port               int    `json:"port"`
	Username           string `json:"username,omitempty"`
	Password           string `json:"password,omitempty"`
	From               string `json:"from"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
	// HTML sends the body as text/html.
	HTML bool `json:"html,omitempty"`
}

// email sends notifications over SMTP: implicit TLS on port 465,
// STARTTLS wherever the server offers it, PLAIN authentication when a
// username is set (which Go allows only over TLS or to localhost).
type email struct {
	opts emailOptions
	from *mail.Address
}

func newEmail(o emailOptions) (*email, error) {
	if o.Host == "" {
		return nil, errors.New("email: no host")
	}
	if o.Port == 0 {
		o.Port = 25
	}
	from, err := mail.ParseAddress(o.From)
	if err != nil {
		return nil, fmt.Errorf("email: from %q: %w", o.From, err)
	}
	return &email{opts: o, from: from}, nil
}

// Send mails the notification to the destination's recipients (a
// comma-separated list): the template's email.subject, and its email.body
// or else its message.
func (e *email) Send(ctx context.Context, n Notification, to Destination) error {
	rcpts, err := mail.ParseAddressList(to.Recipient)
	if err != nil {
		return fmt.Errorf("email: recipient %q: %w", to.Recipient, err)
	}
	subject, body := "", n.Message
	if n.Email != nil {
		subject = n.Email.Subject
		if n.Email.Body != "" {
			body = n.Email.Body
		}
	}
	msg := e.message(rcpts, subject, body)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := e.deliver(ctx, rcpts, msg); err != nil {
		return fmt.Errorf("email via %s: %w", net.JoinHostPort(e.opts.Host, strconv.Itoa(e.opts.Port)), err)
	}
	return nil
}

// oneLine keeps a header value on one line: a template must not add
// headers (or recipients) of its own.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func (e *email) message(rcpts []*mail.Address, subject, body string) []byte {
	var b bytes.Buffer
	tos := make([]string, len(rcpts))
	for i, r := range rcpts {
		tos[i] = r.String()
	}
	contentType := "text/plain"
	if e.opts.HTML {
		contentType = "text/html"
	}
	fmt.Fprintf(&b, "From: %s\r\n", e.from.String())
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(tos, ", "))
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", oneLine(subject)))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().Format(time.RFC1123Z))
	b.WriteString("MIME-Version: 1.0\r\n")
	fmt.Fprintf(&b, "Content-Type: %s; charset=UTF-8\r\n", contentType)
	b.WriteString("Content-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n"))
	return b.Bytes()
}

func (e *email) deliver(ctx context.Context, rcpts []*mail.Address, msg []byte) error {
	addr := net.JoinHostPort(e.opts.Host, strconv.Itoa(e.opts.Port))
	tlsConfig := &tls.Config{ServerName: e.opts.Host, InsecureSkipVerify: e.opts.InsecureSkipVerify} //nolint:gosec // the user's explicit choice
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if e.opts.Port == 465 {
		conn = tls.Client(conn, tlsConfig)
	}
	c, err := smtp.NewClient(conn, e.opts.Host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && e.opts.Port != 465 {
		if err := c.StartTLS(tlsConfig); err != nil {
			return err
		}
	}
	if e.opts.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", e.opts.Username, e.opts.Password, e.opts.Host)); err != nil {
			return err
		}
	}
	if err := c.Mail(e.from.Address); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r.Address); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}
