package notifications

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/repo"
)

// RepoReader reads what templates' repo functions ask through the repo
// server: a commit's metadata, and what the Application's source is.
type RepoReader interface {
	RevisionMetadata(ctx context.Context, req *repo.RevisionMetadataRequest) (*repo.RevisionMetadata, error)
	AppDetails(ctx context.Context, req *repo.AppDetailsRequest) (*repo.AppDetails, error)
}

// CommitMetadata is what repo.GetCommitMetadata answers templates.
type CommitMetadata struct {
	Message string
	Author  string
	Date    time.Time
	Tags    []string
}

// Destination is where one notification goes: a configured service by
// name, and a recipient it understands (a channel, an address; "" for a
// webhook).
type Destination struct {
	Service   string `json:"service"`
	Recipient string `json:"recipient"`
}

// vars are the variables triggers and templates see for app (an
// Application as a plain map) and dest, by Argo CD's names: app, context
// (with notificationType), secrets, serviceType, recipient, and the
// function groups time, strings, sync and repo.
func (cfg *Config) vars(ctx context.Context, app map[string]any, dest Destination, commits RepoReader) map[string]any {
	serviceType := dest.Service
	if svc, ok := cfg.Services[dest.Service]; ok {
		serviceType = svc.Type
	}
	context := maps.Clone(cfg.Context)
	context["notificationType"] = serviceType
	return map[string]any{
		"app":         app,
		"context":     context,
		"secrets":     cfg.Secrets,
		"serviceType": serviceType,
		"recipient":   dest.Recipient,
		"time":        timeFuncs,
		"strings":     stringFuncs,
		"sync":        syncFuncs,
		"repo":        repoFuncs(ctx, app, commits),
	}
}

// timeFuncs are the time group: time.Now(), time.Parse(s) of an RFC 3339
// time, the duration units for arithmetic and the layouts Argo CD
// documents, as Go's time package names them.
var timeFuncs = map[string]any{
	"Now":   func() time.Time { return time.Now() },
	"Parse": func(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) },
	// Layouts.
	"Layout": time.Layout, "ANSIC": time.ANSIC, "UnixDate": time.UnixDate, "RubyDate": time.RubyDate,
	"RFC822": time.RFC822, "RFC822Z": time.RFC822Z, "RFC850": time.RFC850, "RFC1123": time.RFC1123, "RFC1123Z": time.RFC1123Z,
	"RFC3339": time.RFC3339, "RFC3339Nano": time.RFC3339Nano, "Kitchen": time.Kitchen,
	"Stamp": time.Stamp, "StampMilli": time.StampMilli, "StampMicro": time.StampMicro, "StampNano": time.StampNano,
	// Units.
	"Nanosecond":  time.Nanosecond,
	"Microsecond": time.Microsecond,
	"Millisecond": time.Millisecond,
	"Second":      time.Second,
	"Minute":      time.Minute,
	"Hour":        time.Hour,
}

// stringFuncs are the strings group.
var stringFuncs = map[string]any{
	"ReplaceAll": strings.ReplaceAll,
	"ToUpper":    strings.ToUpper,
	"ToLower":    strings.ToLower,
}

// sshRepoURL is an SCP-like Git URL: git@host:org/repo(.git).
var sshRepoURL = regexp.MustCompile(`^(?:[\w.-]+@)?([\w.-]+):(.+?)(?:\.git)?$`)

// repoURLToHTTPS turns a Git URL into the HTTPS address people browse:
// git@github.com:org/repo.git → https://github.com/org/repo.
func repoURLToHTTPS(u string) string {
	if strings.Contains(u, "://") {
		parsed, err := url.Parse(u)
		if err != nil {
			return u
		}
		parsed.Scheme, parsed.User = "https", nil
		parsed.Path = strings.TrimSuffix(parsed.Path, ".git")
		if h := parsed.Hostname(); h != "" && parsed.Port() == "22" {
			parsed.Host = h
		}
		return parsed.String()
	}
	if m := sshRepoURL.FindStringSubmatch(u); m != nil {
		return "https://" + m[1] + "/" + m[2]
	}
	return u
}

// fullNameByRepoURL is a repository's org/name from its URL.
func fullNameByRepoURL(u string) string {
	https := repoURLToHTTPS(u)
	parsed, err := url.Parse(https)
	if err != nil {
		return ""
	}
	return strings.Trim(parsed.Path, "/")
}

// repoFuncs are the repo group, bound to app's repository.
func repoFuncs(ctx context.Context, app map[string]any, commits RepoReader) map[string]any {
	repoURL := appRepoURL(app)
	return map[string]any{
		"RepoURLToHTTPS":    repoURLToHTTPS,
		"FullNameByRepoURL": fullNameByRepoURL,
		"QueryEscape":       url.QueryEscape,
		"GetAppDetails":     func() (*AppDetail, error) { return appDetails(ctx, app, commits) },
		"GetCommitMetadata": func(sha string) (*CommitMetadata, error) {
			if commits == nil {
				return nil, errors.New("no repo server to read commits through")
			}
			if repoURL == "" {
				return nil, errors.New("the application has no Git source")
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			md, err := commits.RevisionMetadata(ctx, &repo.RevisionMetadataRequest{RepoURL: repoURL, Revision: sha, Project: appProject(app)})
			if err != nil {
				return nil, fmt.Errorf("reading commit %s: %w", sha, err)
			}
			out := &CommitMetadata{Message: md.Message, Author: md.Author, Tags: md.Tags}
			if md.Date != nil {
				out.Date = md.Date.Time
			}
			return out, nil
		},
	}
}

// appRepoURL is the repository of app's source, or of its first source.
// appProject is the Application's project, whose repository credentials
// its commits are read with.
func appProject(app map[string]any) string {
	spec, _ := app["spec"].(map[string]any)
	p, _ := spec["project"].(string)
	return p
}

func appRepoURL(app map[string]any) string {
	spec, _ := app["spec"].(map[string]any)
	if src, ok := spec["source"].(map[string]any); ok {
		if u, _ := src["repoURL"].(string); u != "" {
			return u
		}
	}
	if srcs, ok := spec["sources"].([]any); ok && len(srcs) > 0 {
		if src, ok := srcs[0].(map[string]any); ok {
			u, _ := src["repoURL"].(string)
			return u
		}
	}
	return ""
}
