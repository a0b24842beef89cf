package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// ServeOptions configure Serve, the sidecar's side of the protocol.
type ServeOptions struct {
	// Config is the plugin's configuration. Required.
	Config *Config
	// SocketDir is where the socket is made. Default DefaultSocketDir, as
	// Argo CD's ARGOCD_PLUGINSOCKFILEPATH.
	SocketDir string
	// WorkDir holds each request's files while its commands run; it is
	// emptied when Serve starts. Default <temp>/_cmp_server, as Argo CD's
	// ARGOCD_CMP_WORKDIR/_cmp_server.
	WorkDir string
	// MaxArchiveBytes bounds a request's archive and the files it unpacks
	// to. Default 2 GiB, the bound of a checkout.
	MaxArchiveBytes int64
	// MaxOutputBytes bounds what a command prints. Default 64 MiB, the
	// bound of a rendered source.
	MaxOutputBytes int
	// Log receives a line per command run. Default: discarded.
	Log *slog.Logger
}

// sidecar answers the repo server for one plugin.
type sidecar struct {
	opts    ServeOptions
	methods map[string]protoreflect.MethodDescriptor
}

// Serve listens on the plugin's socket in opts.SocketDir and answers the
// repo server until ctx ends: what `capstan cmp-server` (argocd-cmp-server)
// runs in a plugin's sidecar container.
func Serve(ctx context.Context, opts ServeOptions) error {
	if opts.Config == nil {
		return errors.New("no plugin configuration")
	}
	opts.SocketDir = cmp.Or(opts.SocketDir, DefaultSocketDir)
	opts.WorkDir = cmp.Or(opts.WorkDir, filepath.Join(os.TempDir(), "_cmp_server"))
	opts.MaxArchiveBytes = cmp.Or(opts.MaxArchiveBytes, 2<<30)
	opts.MaxOutputBytes = cmp.Or(opts.MaxOutputBytes, 64<<20)
	opts.Log = cmp.Or(opts.Log, slog.New(slog.DiscardHandler))
	ms, err := methods()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(opts.WorkDir); err != nil {
		return fmt.Errorf("emptying the work directory: %w", err)
	}
	if err := os.MkdirAll(opts.WorkDir, 0o700); err != nil {
		return err
	}
	socket := filepath.Join(opts.SocketDir, opts.Config.SocketName())
	_ = os.Remove(socket) // left by an earlier run of this sidecar
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", opts.Config.Metadata.Name, err)
	}
	s := &sidecar{opts: opts, methods: ms}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(8 << 20))
	srv.RegisterService(s.desc(), s)
	opts.Log.Info("serving plugin", "plugin", opts.Config.Metadata.Name, "socket", socket)
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// desc describes the service from Argo CD's schema: its messages are
// dynamic, so the handlers are written against grpc's generic streams.
func (s *sidecar) desc() *grpc.ServiceDesc {
	stream := func(name string, handle func(context.Context, *received) (protoreflect.Message, error)) grpc.StreamDesc {
		return grpc.StreamDesc{StreamName: name, ClientStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
			return s.serveStream(ss, s.methods[name], handle)
		}}
	}
	return &grpc.ServiceDesc{
		ServiceName: string(service),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "CheckPluginConfiguration", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(&emptypb.Empty{}); err != nil {
				return nil, err
			}
			out := dynamicpb.NewMessage(s.methods["CheckPluginConfiguration"].Output())
			set(out, "isDiscoveryConfigured", protoreflect.ValueOfBool(s.opts.Config.Spec.Discover.defined()))
			set(out, "provideGitCreds", protoreflect.ValueOfBool(s.opts.Config.Spec.ProvideGitCreds))
			return out, nil
		}}},
		Streams: []grpc.StreamDesc{
			stream("GenerateManifest", s.generate),
			stream("MatchRepository", s.match),
			stream("GetParametersAnnouncement", s.announce),
		},
		Metadata: "cmpserver/plugin/plugin.proto",
	}
}

// serveStream receives a request's files, answers it with handle and
// removes the files.
func (s *sidecar) serveStream(ss grpc.ServerStream, md protoreflect.MethodDescriptor, handle func(context.Context, *received) (protoreflect.Message, error)) error {
	req, err := s.receive(ss, md.Input())
	if err != nil {
		return fmt.Errorf("%s: receiving the source: %w", md.Name(), err)
	}
	defer req.cleanup()
	out, err := handle(ss.Context(), req)
	if err != nil {
		return fmt.Errorf("%s: %w", md.Name(), err)
	}
	return ss.SendMsg(out)
}
