package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// service is the plugins' gRPC service, as Argo CD's schema names it.
const service protoreflect.FullName = "plugin.ConfigManagementPluginService"

// methods are the plugin service's methods by name, read once from Argo
// CD's schema.
var methods = sync.OnceValues(func() (map[string]protoreflect.MethodDescriptor, error) {
	return serviceMethods(service)
})

// serviceMethods reads a service's methods by name from Argo CD's schema.
func serviceMethods(name protoreflect.FullName) (map[string]protoreflect.MethodDescriptor, error) {
	schema, err := argoapi.Load()
	if err != nil {
		return nil, err
	}
	sd, err := schema.Service(name)
	if err != nil {
		return nil, err
	}
	out := map[string]protoreflect.MethodDescriptor{}
	for i := 0; i < sd.Methods().Len(); i++ {
		md := sd.Methods().Get(i)
		out[string(md.Name())] = md
	}
	return out, nil
}

// call is one connection to a plugin's socket.
type call struct {
	conn    *grpc.ClientConn
	methods map[string]protoreflect.MethodDescriptor
	maxRecv int
}

func (c *Client) dial(socket string) (*call, error) {
	ms, err := methods()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+c.socketPath(socket), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &call{conn: conn, methods: ms, maxRecv: c.opts.MaxManifestBytes}, nil
}

// claims reports whether the plugin on socket renders req's source: one
// without discovery rules only when named, one with them when they match,
// or when named and its discovery is turned off — Argo CD's rules.
func (c *Client) claims(ctx context.Context, socket string, req *request, named bool) (bool, error) {
	k, err := c.dial(socket)
	if err != nil {
		return false, err
	}
	defer k.conn.Close()
	cfg, err := k.unary(ctx, "CheckPluginConfiguration")
	if err != nil {
		return false, err
	}
	if !boolField(cfg, "isDiscoveryConfigured") {
		return named, nil
	}
	res, err := k.stream(ctx, "MatchRepository", req, c.opts.ChunkSize)
	if err != nil {
		return false, err
	}
	if boolField(res, "isSupported") {
		return true, nil
	}
	return named && !boolField(res, "isDiscoveryEnabled"), nil
}

// generate has the plugin on socket render req's source and returns the
// text it printed. A plugin asking for Git credentials gets creds, through
// the ask-pass socket, while it runs.
func (c *Client) generate(ctx context.Context, socket string, req *request, creds *GitCreds) ([]string, error) {
	k, err := c.dial(socket)
	if err != nil {
		return nil, err
	}
	defer k.conn.Close()
	if creds != nil && c.opts.AskPass != nil {
		cfg, err := k.unary(ctx, "CheckPluginConfiguration")
		if err != nil {
			return nil, err
		}
		if boolField(cfg, "provideGitCreds") {
			env, release := c.opts.AskPass.Grant(*creds)
			defer release()
			withCreds := *req
			withCreds.env = append(slices.Clone(req.env), env...)
			req = &withCreds
		}
	}
	res, err := k.stream(ctx, "GenerateManifest", req, c.opts.ChunkSize)
	if err != nil {
		return nil, err
	}
	list := res.Get(res.Descriptor().Fields().ByName("manifests")).List()
	out := make([]string, list.Len())
	for i := range out {
		out[i] = list.Get(i).String()
	}
	return out, nil
}

// announcements asks the plugin on socket for the parameters it announces
// for req's source.
func (c *Client) announcements(ctx context.Context, socket string, req *request) ([]json.RawMessage, error) {
	k, err := c.dial(socket)
	if err != nil {
		return nil, err
	}
	defer k.conn.Close()
	res, err := k.stream(ctx, "GetParametersAnnouncement", req, c.opts.ChunkSize)
	if err != nil {
		return nil, err
	}
	list := res.Get(res.Descriptor().Fields().ByName("parameterAnnouncements")).List()
	out := make([]json.RawMessage, list.Len())
	for i := range out {
		if out[i], err = argoapi.MarshalJSON(list.Get(i).Message()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (k *call) path(method string) string {
	return "/" + string(service) + "/" + method
}

func (k *call) unary(ctx context.Context, method string) (*dynamicpb.Message, error) {
	out := dynamicpb.NewMessage(k.methods[method].Output())
	if err := k.conn.Invoke(ctx, k.path(method), &emptypb.Empty{}, out); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return out, nil
}

// stream sends req (its metadata, then the archive in chunks) on a client
// stream and returns the answer.
func (k *call) stream(ctx context.Context, method string, req *request, chunk int) (*dynamicpb.Message, error) {
	md := k.methods[method]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := k.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, k.path(method), grpc.MaxCallRecvMsgSize(k.maxRecv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := send(s, md.Input(), req, chunk); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: sending the source: %w", method, err)
	}
	// io.EOF from a send means the plugin answered early; its answer or
	// error comes from RecvMsg.
	out := dynamicpb.NewMessage(md.Output())
	if err := s.RecvMsg(out); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return out, nil
}

// send writes req on s as AppStreamRequest messages and closes the sending side.
func send(s grpc.ClientStream, in protoreflect.MessageDescriptor, req *request, chunk int) error {
	if err := s.SendMsg(metadataMessage(in, req)); err != nil {
		return err
	}
	body, err := req.body()
	if err != nil {
		return err
	}
	buf := make([]byte, chunk)
	for {
		n, err := io.ReadFull(body, buf)
		if n > 0 {
			if err := s.SendMsg(fileMessage(in, buf[:n])); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	return s.CloseSend()
}

func metadataMessage(in protoreflect.MessageDescriptor, req *request) *dynamicpb.Message {
	mdField := in.Fields().ByName("metadata")
	meta := dynamicpb.NewMessage(mdField.Message())
	set(meta, "appName", protoreflect.ValueOfString(req.appName))
	set(meta, "appRelPath", protoreflect.ValueOfString(req.appPath))
	set(meta, "checksum", protoreflect.ValueOfString(req.checksum))
	set(meta, "size", protoreflect.ValueOfInt64(req.size))
	envField := meta.Descriptor().Fields().ByName("env")
	list := meta.Mutable(envField).List()
	for _, kv := range req.env {
		name, value, _ := strings.Cut(kv, "=")
		e := dynamicpb.NewMessage(envField.Message())
		set(e, "name", protoreflect.ValueOfString(name))
		set(e, "value", protoreflect.ValueOfString(value))
		list.Append(protoreflect.ValueOfMessage(e))
	}
	m := dynamicpb.NewMessage(in)
	m.Set(mdField, protoreflect.ValueOfMessage(meta))
	return m
}

func fileMessage(in protoreflect.MessageDescriptor, data []byte) *dynamicpb.Message {
	fileField := in.Fields().ByName("file")
	f := dynamicpb.NewMessage(fileField.Message())
	set(f, "chunk", protoreflect.ValueOfBytes(data))
	m := dynamicpb.NewMessage(in)
	m.Set(fileField, protoreflect.ValueOfMessage(f))
	return m
}

func set(m *dynamicpb.Message, field protoreflect.Name, v protoreflect.Value) {
	m.Set(m.Descriptor().Fields().ByName(field), v)
}

func boolField(m *dynamicpb.Message, field protoreflect.Name) bool {
	return m.Get(m.Descriptor().Fields().ByName(field)).Bool()
}
