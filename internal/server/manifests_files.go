package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	reposvc "github.com/capstan-cd/capstan/internal/repo"
)

// Argo CD's GetManifestsWithFiles (argocd app diff --local
// --server-side-generate) streams the tar.gz of a local directory over
// gRPC, and the application's source renders it as its directory. Argo CD
// has no REST form of it; Capstan's is POST
// /api/v1/applications/{name}/manifests-with-files with the archive as the
// body and checksum (its SHA-256, hex), appNamespace and project in the
// query, which the gRPC method is bridged to like every other.

// manifestsWithFilesSuffix ends the REST path.
const manifestsWithFilesSuffix = "/manifests-with-files"

// getManifestsWithFiles is the gRPC method.
const getManifestsWithFiles = "application.ApplicationService.GetManifestsWithFiles"

// manifestsWithFiles renders the archive in the body as the Application's
// source, for a caller who may get the Application.
func (s *Server) manifestsWithFiles(w http.ResponseWriter, r *http.Request, c *caller) {
	app := s.loadApp(w, r, c, "get")
	if app == nil {
		return
	}
	archive, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the archive is over the limit of %d bytes", tooLarge.Limit))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the archive: "+err.Error())
		return
	}
	sum := sha256.Sum256(archive)
	if want := r.URL.Query().Get("checksum"); want != "" && want != hex.EncodeToString(sum[:]) {
		writeError(w, http.StatusBadRequest, "the archive does not match its checksum")
		return
	}
	sources := app.Spec.GetSources()
	i := slices.IndexFunc(sources, func(src v1alpha1.ApplicationSource) bool { return src.Path != "" || src.Chart != "" || src.Ref == "" })
	if i < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("application %s has no source to render", app.Name))
		return
	}
	resp, err := s.opts.Renderer.RenderFiles(r.Context(), &reposvc.FilesRequest{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Source: sources[i], Archive: archive,
	})
	if err != nil {
		s.answerRepo(w, nil, err)
		return
	}
	s.writeManifests(w, app, resp)
}

// argoManifestsWithFiles bridges the client-streaming gRPC method: the
// query, then the archive's chunks, become one REST call.
func (b *rpcBridge) argoManifestsWithFiles(md protoreflect.MethodDescriptor) func(context.Context, *connect.ClientStream[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
	return func(ctx context.Context, stream *connect.ClientStream[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		var query protoreflect.Message
		var archive bytes.Buffer
		for stream.Receive() {
			m := stream.Msg()
			fields := m.Descriptor().Fields()
			if fd := fields.ByName("query"); m.Has(fd) {
				query = m.Get(fd).Message()
				continue
			}
			if fd := fields.ByName("chunk"); m.Has(fd) {
				chunk := m.Get(fd).Message()
				data := chunk.Get(chunk.Descriptor().Fields().ByName("chunk")).Bytes()
				if archive.Len()+len(data) > maxFilesBody {
					return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("the archive is over the limit of %d bytes", maxFilesBody))
				}
				archive.Write(data)
			}
		}
		if err := stream.Err(); err != nil {
			return nil, err
		}
		if query == nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("the stream sent no query"))
		}
		str := func(name string) string {
			return query.Get(query.Descriptor().Fields().ByName(protoreflect.Name(name))).String()
		}
		q := url.Values{}
		for _, name := range []string{"checksum", "appNamespace", "project"} {
			if v := str(name); v != "" {
				q.Set(name, v)
			}
		}
		path := "/api/v1/applications/" + url.PathEscape(str("name")) + manifestsWithFilesSuffix + "?" + q.Encode()
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(archive.Bytes()))
		if err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
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
