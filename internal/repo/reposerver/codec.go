package reposerver

import (
	"encoding/json"

	"google.golang.org/grpc/encoding"
)

// codecName is the gRPC content subtype of the repo server's messages:
// application/grpc+json. The messages are repo.Request and repo.Response,
// whose JSON form is already their stable wire form (they are also what the
// manifest cache stores), so no second schema has to be kept in step.
const codecName = "json"

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return codecName }

func init() {
	encoding.RegisterCodec(jsonCodec{})
}
