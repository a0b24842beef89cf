package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// A plugin whose plugin.yaml sets provideGitCreds gets the Git credentials
// of the repository it renders, as from Argo CD's repo server: while the
// render runs, the repo server answers on its ask-pass socket to whoever
// holds the render's nonce, and the plugin's commands get an environment
// in which git asks through GIT_ASKPASS (Argo CD's argocd program, run as
// argocd-git-ask-pass, or Capstan's under the same name), which reads the
// nonce and the socket from that environment.

// askPassService is the ask-pass gRPC service, as Argo CD's schema names it.
const askPassService protoreflect.FullName = "askpass.AskPassService"

// DefaultAskPassSocket is where Argo CD's repo server serves credentials;
// ARGOCD_ASK_PASS_SOCK names another (a volume shared with the sidecars).
const DefaultAskPassSocket = "/tmp/reposerver-ask-pass.sock"

// AskPassSocketEnv and AskPassNonceEnv are the environment variables of a
// plugin command's git naming the socket and the render's nonce.
const (
	AskPassSocketEnv = "ARGOCD_ASK_PASS_SOCK"
	AskPassNonceEnv  = "ARGOCD_GIT_ASKPASS_NONCE"
)

// GitCreds are a repository's HTTPS credentials, as a plugin's git is
// given them.
type GitCreds struct {
	Username, Password string
	// Insecure skips TLS verification (GIT_SSL_NO_VERIFY).
	Insecure bool
}

// AskPass serves credentials to plugins' git on a Unix socket.
type AskPass struct {
	socket string
	srv    *grpc.Server
	mu     sync.Mutex
	creds  map[string]GitCreds
}

// ListenAskPass serves on socket (replacing a socket left there) until
// Close.
func ListenAskPass(socket string) (*AskPass, error) {
	ms, err := serviceMethods(askPassService)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("ask-pass socket: %w", err)
	}
	a := &AskPass{socket: socket, srv: grpc.NewServer(grpc.MaxRecvMsgSize(64 << 10)), creds: map[string]GitCreds{}}
	md := ms["GetCredentials"]
	a.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: string(askPassService),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "GetCredentials", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(md.Input())
			if err := dec(in); err != nil {
				return nil, err
			}
			c, ok := a.lookup(in.Get(md.Input().Fields().ByName("nonce")).String())
			if !ok {
				return nil, status.Error(codes.NotFound, "unknown nonce")
			}
			out := dynamicpb.NewMessage(md.Output())
			set(out, "username", protoreflect.ValueOfString(c.Username))
			set(out, "password", protoreflect.ValueOfString(c.Password))
			return out, nil
		}}},
		Metadata: "util/askpass/askpass.proto",
	}, a)
	go func() { _ = a.srv.Serve(ln) }()
	return a, nil
}

// Close stops serving.
func (a *AskPass) Close() { a.srv.Stop() }

func (a *AskPass) lookup(nonce string) (GitCreds, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.creds[nonce]
	return c, ok
}

// Grant serves c under a new nonce until release, and returns the
// environment a plugin's git needs to ask for them.
func (a *AskPass) Grant(c GitCreds) (env []string, release func()) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	a.mu.Lock()
	a.creds[nonce] = c
	a.mu.Unlock()
	env = []string{
		"GIT_ASKPASS=argocd",
		AskPassNonceEnv + "=" + nonce,
		"GIT_TERMINAL_PROMPT=0",
		"ARGOCD_BINARY_NAME=argocd-git-ask-pass",
		AskPassSocketEnv + "=" + a.socket,
	}
	if c.Insecure {
		env = append(env, "GIT_SSL_NO_VERIFY=true")
	}
	return env, func() {
		a.mu.Lock()
		delete(a.creds, nonce)
		a.mu.Unlock()
	}
}

// AskPassAnswer answers git's question (its one argument, "Username for
// …" or "Password for …") from the ask-pass socket, with the nonce of the
// environment: what argocd-git-ask-pass prints.
func AskPassAnswer(ctx context.Context, socket, nonce, question string) (string, error) {
	if nonce == "" {
		return "", fmt.Errorf("%s is not set", AskPassNonceEnv)
	}
	ms, err := serviceMethods(askPassService)
	if err != nil {
		return "", err
	}
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	md := ms["GetCredentials"]
	in := dynamicpb.NewMessage(md.Input())
	set(in, "nonce", protoreflect.ValueOfString(nonce))
	out := dynamicpb.NewMessage(md.Output())
	if err := conn.Invoke(ctx, "/"+string(askPassService)+"/GetCredentials", in, out); err != nil {
		return "", err
	}
	field := func(name protoreflect.Name) string { return out.Get(md.Output().Fields().ByName(name)).String() }
	switch {
	case strings.HasPrefix(question, "Username"):
		return field("username"), nil
	case strings.HasPrefix(question, "Password"):
		return field("password"), nil
	}
	return "", fmt.Errorf("unknown credential type %q", question)
}
