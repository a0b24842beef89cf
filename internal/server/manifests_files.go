package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/argoapi"
	"github.com/capstan-cd/capstan/internal/rbac"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
)

// Argo CD's GetManifestsWithFiles (argocd app diff --local
// --server-side-generate) is a client stream: a query, then the chunks of
// the tar.gz of a local directory, which the application's source renders
// as its directory. Its REST form, POST
// /api/v1/applications/manifestsWithFiles, takes the stream's messages as
// JSON objects one after another ({"query": …} then {"chunk": {"chunk":
// base64}} …); the gRPC method is bridged to it.

// manifestsWithFilesPath is the REST path.
const manifestsWithFilesPath = "/api/v1/applications/manifestsWithFiles"

// filesQuery is the stream's first message.
type filesQuery struct {
	Name         string `json:"name"`
	Checksum     string `json:"checksum"`
	AppNamespace string `json:"appNamespace"`
	Project      string `json:"project"`
}

// filesMessage is one message of the stream: the query or a chunk.
type filesMessage struct {
	Query *filesQuery `json:"query"`
	Chunk *struct {
		Chunk []byte `json:"chunk"`
	} `json:"chunk"`
}

// readFilesStream reads the stream's messages: the query, and the archive
// its chunks add up to.
func readFilesStream(body io.Reader) (*filesQuery, []byte, error) {
	dec := json.NewDecoder(body)
	var query *filesQuery
	var archive bytes.Buffer
	for {
		var m filesMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		switch {
		case m.Query != nil:
			query = m.Query
		case m.Chunk != nil:
			archive.Write(m.Chunk.Chunk)
		}
	}
	if query == nil {
		return nil, nil, errors.New("the stream sent no query")
	}
	return query, archive.Bytes(), nil
}

// manifestsWithFiles renders the archive the stream carries as the
// Application's source, for a caller who may get the Application.
func (s *Server) manifestsWithFiles(r *http.Request, c *caller) (any, error) {
	query, archive, err := readFilesStream(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, withStatus(http.StatusRequestEntityTooLarge, fmt.Errorf("the stream is over the limit of %d bytes", tooLarge.Limit))
	case err != nil:
		return nil, badRequest("reading the manifests query with files: " + err.Error())
	}
	if err := checkName("application", query.Name); err != nil {
		return nil, err
	}
	r.SetPathValue("name", query.Name)
	if query.AppNamespace != "" {
		r.URL.RawQuery = url.Values{"appNamespace": {query.AppNamespace}}.Encode()
	}
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(archive)
	if query.Checksum != hex.EncodeToString(sum[:]) {
		return nil, badRequest("the archive does not match its checksum")
	}
	sources := app.Spec.GetSources()
	i := slices.IndexFunc(sources, func(src v1alpha1.ApplicationSource) bool { return src.Path != "" || src.Chart != "" || src.Ref == "" })
	if i < 0 {
		return nil, badRequest(fmt.Sprintf("application %s has no source to render", app.Name))
	}
	resp, err := s.opts.Renderer.RenderFiles(r.Context(), &reposvc.FilesRequest{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Source: sources[i], Archive: archive,
	})
	if err != nil {
		return nil, fromRepo(err)
	}
	return s.manifestAnswer(r.Context(), app, resp)
}

// argoClientStream bridges a client-streaming method to its REST call:
// the messages, as JSON objects one after another, are the body.
func (b *rpcBridge) argoClientStream(md protoreflect.MethodDescriptor, binding argoapi.Binding) func(context.Context, *connect.ClientStream[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
	return func(ctx context.Context, stream *connect.ClientStream[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		var body bytes.Buffer
		for stream.Receive() {
			data, err := argoapi.MarshalJSON(stream.Msg())
			if err != nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, err)
			}
			if body.Len()+len(data) > int(bodyLimit(binding.Path)) {
				return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("the stream is over the limit of %d bytes", bodyLimit(binding.Path)))
			}
			body.Write(data)
			body.WriteByte('\n')
		}
		if err := stream.Err(); err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, binding.Method, binding.Path, &body)
		if err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
		r.Header.Set("Content-Type", "application/json")
		callerHeaders(r, stream.RequestHeader())
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		b.s.mux.ServeHTTP(rec, r)
		if rec.status >= 300 {
			return nil, rpcError(rec.status, rec.body.Bytes())
		}
		resp := dynamicpb.NewMessage(md.Output())
		if err := argoapi.UnmarshalJSON(rec.body.Bytes(), resp); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("decoding the answer of %s: %w", md.FullName(), err))
		}
		argoapi.FillRequired(resp)
		return connect.NewResponse(resp), nil
	}
}
