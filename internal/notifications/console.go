package notifications

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Console is a Sender that writes each notification, as YAML, to W: the
// console:stdout recipient of the admin commands that try templates.
type Console struct{ W io.Writer }

// Send writes n.
func (c Console) Send(_ context.Context, n Notification, _ Destination) error {
	data, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(c.W, string(data))
	return err
}
