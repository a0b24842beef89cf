package cloudauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// KubeToken is a token a managed Kubernetes service's API server takes, and
// when to stop using it.
type KubeToken struct {
	Token   string
	Expires time.Time
}

// EKS token constants, as aws-iam-authenticator reads them: the signed
// request carries the cluster's name in x-k8s-aws-id and is valid 60 s
// for STS, while EKS takes the token for 15 minutes.
const (
	eksClusterHeader = "x-k8s-aws-id"
	eksTokenPrefix   = "k8s-aws-v1."
	eksPresignTTL    = 60
	eksTokenTTL      = 15 * time.Minute
)

// AWSCluster names an EKS cluster and who reaches it, as a cluster
// Secret's awsAuthConfig does.
type AWSCluster struct {
	// ClusterName is the EKS cluster's name; required.
	ClusterName string
	// RoleARN, when set, is assumed first.
	RoleARN string
	// Profile is the shared configuration's profile. Default: the
	// environment's (AWS_PROFILE, else "default").
	Profile string
}

// EKS returns a token for the EKS cluster: an STS GetCallerIdentity request
// signed with the environment's AWS credentials (after assuming RoleARN),
// which EKS presents to STS to learn who is calling. It expires a minute
// before EKS stops taking it.
func (s *Source) EKS(ctx context.Context, c AWSCluster) (KubeToken, error) {
	if c.ClusterName == "" {
		return KubeToken{}, fmt.Errorf("an EKS token needs the cluster's name")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	// The AWS SDK's own HTTP client: it takes AWS_CA_BUNDLE.
	var opts []func(*config.LoadOptions) error
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return KubeToken{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	client := sts.NewFromConfig(cfg)
	if c.RoleARN != "" {
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(client, c.RoleARN))
		client = sts.NewFromConfig(cfg)
	}
	signed, err := sts.NewPresignClient(client).PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue(eksClusterHeader, c.ClusterName),
				smithyhttp.SetHeaderValue("X-Amz-Expires", strconv.Itoa(eksPresignTTL)))
		})
	})
	if err != nil {
		return KubeToken{}, fmt.Errorf("signing the EKS token of %s: %w", c.ClusterName, err)
	}
	return KubeToken{Token: eksTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(signed.URL)), Expires: time.Now().Add(eksTokenTTL - time.Minute)}, nil
}

// gkeScopes are the scopes of a GKE token.
var gkeScopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// GKE returns an access token of the environment's Google credentials
// (GKE workload identity, GOOGLE_APPLICATION_CREDENTIALS, the metadata
// server), which GKE's API servers take.
func (s *Source) GKE(ctx context.Context) (KubeToken, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.opts.HTTPClient)
	creds, err := google.FindDefaultCredentials(ctx, gkeScopes...)
	if err != nil {
		return KubeToken{}, fmt.Errorf("finding Google credentials: %w", err)
	}
	t, err := creds.TokenSource.Token()
	if err != nil {
		return KubeToken{}, fmt.Errorf("getting a Google access token: %w", tokenError(err))
	}
	return KubeToken{Token: t.AccessToken, Expires: t.Expiry}, nil
}

// AKSServerID is the application ID of AKS's Microsoft Entra ID server
// app, the audience of AKS tokens; AAD_SERVER_APPLICATION_ID names another.
const AKSServerID = "6dae42f8-4368-4678-94ff-3960e28e3630"

// AKS returns an Entra ID token for AKS's API servers, bought with the
// process's Azure identity (workload identity, then a managed identity).
func (s *Source) AKS(ctx context.Context) (KubeToken, error) {
	server := AKSServerID
	if v := os.Getenv("AAD_SERVER_APPLICATION_ID"); v != "" {
		server = v
	}
	t, err := s.workloadIdentity(ctx, server+"/.default")
	if err != nil {
		return KubeToken{}, err
	}
	return KubeToken{Token: t.Token, Expires: t.ExpiresOn}, nil
}
