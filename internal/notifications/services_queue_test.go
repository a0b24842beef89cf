package notifications_test

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // SQS's checksum of the message body
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/pstest"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Message queues: a real NATS server, a local server speaking SQS's JSON
// protocol and Google's in-memory Pub/Sub, each recording what arrives.
func init() {
	serviceCases = append(serviceCases,
		// NATS: the message published on the recipient subject, with the
		// options' headers, by a client authenticated with a password.
		serviceCase{
			service: "nats", recipient: "capstan.deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT,
					Username: "capstan", Password: "nats-secret", NoLog: true, NoSigs: true})
				if err != nil {
					t.Fatal(err)
				}
				srv.Start()
				t.Cleanup(srv.Shutdown)
				if !srv.ReadyForConnections(10 * time.Second) {
					t.Fatal("the NATS server did not start")
				}
				nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo("capstan", "nats-secret"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(nc.Close)
				var q queue
				if _, err := nc.Subscribe("capstan.>", func(m *nats.Msg) {
					meta := map[string]string{}
					for k := range m.Header {
						meta[k] = m.Header.Get(k)
					}
					q.add("PUB", m.Subject, m.Data, meta)
				}); err != nil {
					t.Fatal(err)
				}
				if err := nc.Flush(); err != nil {
					t.Fatal(err)
				}
				return "url: " + srv.ClientURL() + "\nusername: capstan\npassword: $nats-password\nheaders:\n  X-Source: capstan\n",
					map[string]string{"nats-password": "nats-secret"}, q.got
			},
			want: []string{"capstan.deploys", `"data":"` + message, `"X-Source":"capstan"`},
		},
		// Amazon SQS: the queue's URL looked up by name, then the message sent
		// to it, with static credentials and a region.
		serviceCase{
			service: "awssqs", recipient: "deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				missing := filepath.Join(t.TempDir(), "missing")
				for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret",
					"AWS_REGION": "eu-west-1", "AWS_CA_BUNDLE": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": missing,
					"AWS_SHARED_CREDENTIALS_FILE": missing, "AWS_EC2_METADATA_DISABLED": "true"} {
					t.Setenv(k, v)
				}
				var base string
				rec := &recorder{answer: func(r *http.Request) (int, string) {
					switch r.Header.Get("X-Amz-Target") {
					case "AmazonSQS.GetQueueUrl":
						return http.StatusOK, `{"QueueUrl":"` + base + `/000000000000/deploys"}`
					case "AmazonSQS.SendMessage":
						var in struct{ MessageBody string }
						_ = json.Unmarshal(r.Context().Value(sqsBody{}).([]byte), &in)
						sum := md5.Sum([]byte(in.MessageBody))
						return http.StatusOK, `{"MessageId":"m-1","MD5OfMessageBody":"` + hex.EncodeToString(sum[:]) + `"}`
					}
					return http.StatusBadRequest, `{"__type":"com.amazonaws.sqs#InvalidAction","message":"unknown action"}`
				}}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					rec.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sqsBody{}, body)))
				}))
				t.Cleanup(srv.Close)
				base = srv.URL
				return "region: eu-west-1\nendpointUrl: " + srv.URL + "\nkey: $sqs-key\nsecret: $sqs-secret\n",
					map[string]string{"sqs-key": "AKIDTEST", "sqs-secret": "sqs-secret"}, rec.got
			},
			template: "awssqs:\n  messageGroupId: '{{.app.metadata.name}}'\n  messageAttributes:\n    app: '{{.app.metadata.name}}'\n",
			want: []string{`"QueueName":"deploys"`, `"MessageBody":"` + message, `"MessageGroupId":"guestbook"`,
				`"QueueUrl":"http://`},
		},
		// Google Pub/Sub: the message, with its attributes, published on the
		// recipient topic (not the options' default one) and pulled from a
		// subscription to it.
		serviceCase{
			service: "gcppubsub", recipient: "deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				srv := pstest.NewServer()
				t.Cleanup(func() { _ = srv.Close() })
				t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
				ctx := context.Background()
				if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/shop/topics/deploys"}); err != nil {
					t.Fatal(err)
				}
				sub := "projects/shop/subscriptions/capstan"
				if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: "projects/shop/topics/deploys"}); err != nil {
					t.Fatal(err)
				}
				var q queue
				pull := func() []request {
					res, err := srv.GServer.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub})
					if err == nil && len(res.ReceivedMessages) > 0 {
						var ids []string
						for _, m := range res.ReceivedMessages {
							q.add("PUBLISH", sub, m.Message.Data, m.Message.Attributes)
							ids = append(ids, m.AckId)
						}
						_, _ = srv.GServer.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids})
					}
					return q.got()
				}
				return "project: shop\ntopic: releases\n", nil, pull
			},
			template: "gcppubsub:\n  attributes:\n    app: '{{.app.metadata.name}}'\n    revision: '{{.app.status.sync.revision}}'\n",
			want:     []string{`"data":"` + message, `"app":"guestbook"`, `"revision":"` + revision + `"`},
		},
	)
}

// sqsBody keys the body of an SQS call in its request's context.
type sqsBody struct{}

// queue records the messages a subscriber received, each as a request
// whose Body is the message's data and metadata in JSON.
type queue struct {
	mu   sync.Mutex
	reqs []request
}

func (q *queue) add(method, path string, data []byte, meta map[string]string) {
	body, _ := json.Marshal(struct {
		Data string            `json:"data"`
		Meta map[string]string `json:"meta,omitempty"`
	}{string(data), meta})
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reqs = append(q.reqs, request{Method: method, Path: path, Body: string(body)})
}

func (q *queue) got() []request {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]request(nil), q.reqs...)
}
