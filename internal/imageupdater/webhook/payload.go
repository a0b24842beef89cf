package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// payload holds the fields of every supported webhook.
type payload struct {
	// Docker Hub and Alibaba Cloud
	PushData *struct {
		Tag string `json:"tag"`
	} `json:"push_data"`
	// An object for Docker Hub and Alibaba Cloud; Quay's is a string.
	Repository repositoryObject `json:"repository"`
	// GitHub Packages
	RegistryPackage *githubPackage `json:"registry_package"`
	Package         *githubPackage `json:"package"`
	// Harbor
	Type      string `json:"type"`
	EventData *struct {
		Resources []struct {
			ResourceURL string `json:"resource_url"`
		} `json:"resources"`
	} `json:"event_data"`
	// Quay
	DockerURL   string   `json:"docker_url"`
	UpdatedTags []string `json:"updated_tags"`
	// distribution's notifications: a list of events
	Events []registryEvent `json:"events"`
	// Azure Container Registry: one event of the same shape
	registryEvent
	// CloudEvents (Type above is the event's type)
	SpecVersion string         `json:"specversion"`
	Source      string         `json:"source"`
	Subject     string         `json:"subject"`
	Data        map[string]any `json:"data"`
}

// registryEvent is a distribution registry's notification of one push.
type registryEvent struct {
	Action string `json:"action"`
	Target struct {
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
	} `json:"target"`
	Request struct {
		Host string `json:"host"`
	} `json:"request"`
}

type githubPackage struct {
	PackageVersion struct {
		PackageURL string `json:"package_url"`
	} `json:"package_version"`
}

// repositoryObject reads Docker Hub's and Alibaba Cloud's repository
// objects and ignores Quay's repository string.
type repositoryObject struct {
	RepoName     string `json:"repo_name"`      // Docker Hub
	RepoFullName string `json:"repo_full_name"` // Alibaba Cloud, namespace/name
	Name         string `json:"name"`
	Namespace    string `json:"namespace"`
	Region       string `json:"region"`
}

func (r *repositoryObject) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		type plain repositoryObject
		return json.Unmarshal(data, (*plain)(r))
	}
	return nil
}

// looksLike reports whether the payload has the shape of kind's.
func (p *payload) looksLike(kind Kind) bool {
	switch kind {
	case DockerHub:
		return p.PushData != nil && p.Repository.RepoName != ""
	case AliyunACR:
		return p.PushData != nil && (p.Repository.RepoFullName != "" || p.Repository.Region != "")
	case GitHub:
		return p.RegistryPackage != nil || p.Package != nil
	case Harbor:
		return p.EventData != nil
	case Quay:
		return p.DockerURL != ""
	case CloudEvents:
		return p.SpecVersion != ""
	case AzureACR:
		return p.Action != "" && p.Target.Repository != ""
	case Distribution:
		return p.Events != nil
	}
	return false
}

// pushes are the images the payload, read as kind's, reports pushed.
// registryURL names Alibaba Cloud's registry when given.
func (p *payload) pushes(kind Kind, registryURL string) ([]Push, error) {
	switch kind {
	case DockerHub:
		if p.PushData == nil || p.Repository.RepoName == "" {
			return nil, fmt.Errorf("not a Docker Hub push: no push_data or repository.repo_name")
		}
		repo := p.Repository.RepoName
		if !strings.Contains(repo, "/") {
			repo = "library/" + repo
		}
		return []Push{{Image: "docker.io/" + repo, Tag: p.PushData.Tag}}, nil
	case AliyunACR:
		return p.aliyunPush(registryURL)
	case GitHub:
		pkg := p.RegistryPackage
		if pkg == nil {
			pkg = p.Package
		}
		if pkg == nil || pkg.PackageVersion.PackageURL == "" {
			return nil, fmt.Errorf("not a GitHub Packages event: no package_version.package_url")
		}
		return []Push{splitPush(pkg.PackageVersion.PackageURL)}, nil
	case Harbor:
		return p.harborPushes()
	case Quay:
		return p.quayPushes()
	case CloudEvents:
		return p.cloudEventPush()
	case AzureACR:
		return eventPushes([]registryEvent{p.registryEvent}), nil
	case Distribution:
		return eventPushes(p.Events), nil
	}
	return nil, fmt.Errorf("webhook type %q: want %s", kind, kindList())
}

func (p *payload) harborPushes() ([]Push, error) {
	if p.EventData == nil {
		return nil, fmt.Errorf("not a Harbor event: no event_data")
	}
	if p.Type != "" && p.Type != "PUSH_ARTIFACT" {
		return nil, nil
	}
	var out []Push
	for _, res := range p.EventData.Resources {
		if res.ResourceURL != "" {
			out = append(out, splitPush(res.ResourceURL))
		}
	}
	return out, nil
}

func (p *payload) quayPushes() ([]Push, error) {
	if p.DockerURL == "" {
		return nil, fmt.Errorf("not a Quay event: no docker_url")
	}
	if len(p.UpdatedTags) == 0 {
		return []Push{{Image: p.DockerURL}}, nil
	}
	out := make([]Push, 0, len(p.UpdatedTags))
	for _, tag := range p.UpdatedTags {
		out = append(out, Push{Image: p.DockerURL, Tag: tag})
	}
	return out, nil
}

// eventPushes are the tagged manifest pushes among a registry's events;
// pulls, blob pushes and untagged manifests change no tag.
func eventPushes(events []registryEvent) []Push {
	var out []Push
	for _, e := range events {
		if e.Action != "push" || e.Target.Repository == "" || e.Target.Tag == "" || e.Request.Host == "" {
			continue
		}
		out = append(out, Push{Image: e.Request.Host + "/" + e.Target.Repository, Tag: e.Target.Tag})
	}
	return out
}

// aliyunPush reads Alibaba Cloud Container Registry's push: its
// registry is registryURL, else the region's public one.
func (p *payload) aliyunPush(registryURL string) ([]Push, error) {
	repo := p.Repository.RepoFullName
	if repo == "" && p.Repository.Name != "" {
		repo = strings.Trim(p.Repository.Namespace+"/"+p.Repository.Name, "/")
	}
	if p.PushData == nil || repo == "" || p.PushData.Tag == "" {
		return nil, fmt.Errorf("not an Alibaba Cloud push: no push_data.tag or repository name")
	}
	if registryURL == "" && p.Repository.Region != "" {
		registryURL = "registry." + p.Repository.Region + ".aliyuncs.com"
	}
	if registryURL == "" {
		return nil, fmt.Errorf("an Alibaba Cloud push without repository.region: say which registry with ?registry_url=")
	}
	return []Push{{Image: registryURL + "/" + repo, Tag: p.PushData.Tag}}, nil
}

// cloudEventPush reads a CloudEvent of an image push: AWS ECR's through
// EventBridge (type com.amazon.ecr.*), or any container or image event
// naming its repository, tag and registry in its data, source or subject
// (repository:tag).
func (p *payload) cloudEventPush() ([]Push, error) {
	if p.SpecVersion == "" || p.Type == "" {
		return nil, fmt.Errorf("not a CloudEvent: no specversion or type")
	}
	repo, tag, _ := strings.Cut(p.Subject, ":")
	var registry string
	switch {
	case strings.HasPrefix(p.Type, "com.amazon.ecr."):
		repo, tag = firstOf(p.Data, repo, "repositoryName"), firstOf(p.Data, tag, "imageTag")
		registry = ecrRegistry(p.Source, dataString(p.Data, "registryId"))
	case strings.Contains(p.Type, "container") || strings.Contains(p.Type, "image"):
		repo, tag = firstOf(p.Data, repo, "repositoryName", "repository"), firstOf(p.Data, tag, "imageTag", "tag")
		registry = firstOf(p.Data, hostOf(p.Source), "registryUrl", "registry")
	default:
		return nil, fmt.Errorf("CloudEvent type %q is no image push", p.Type)
	}
	if repo == "" || tag == "" || registry == "" {
		return nil, fmt.Errorf("CloudEvent %q names no repository, tag or registry", p.Type)
	}
	return []Push{{Image: registry + "/" + repo, Tag: tag}}, nil
}

// firstOf is the first of data's keys holding a string, else fallback.
func firstOf(data map[string]any, fallback string, keys ...string) string {
	for _, k := range keys {
		if s := dataString(data, k); s != "" {
			return s
		}
	}
	return fallback
}

func dataString(data map[string]any, key string) string {
	s, _ := data[key].(string)
	return s
}

// ecrRegistry is the ECR registry of an event from arn:aws:ecr:REGION:
// ACCOUNT:…, the account replaced by registryID when given.
func ecrRegistry(source, registryID string) string {
	parts := strings.Split(source, ":")
	if len(parts) < 5 || parts[1] != "aws" || parts[2] != "ecr" || (parts[0] != "arn" && parts[0] != "urn") {
		return ""
	}
	account := parts[4]
	if registryID != "" {
		account = registryID
	}
	if parts[3] == "" || account == "" {
		return ""
	}
	return account + ".dkr.ecr." + parts[3] + ".amazonaws.com"
}

// hostOf is the host of a source that is a URL, or the first segment of
// one that starts with a host name.
func hostOf(source string) string {
	if u, err := url.Parse(source); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return u.Host
	}
	if first, _, _ := strings.Cut(source, "/"); strings.Contains(first, ".") {
		return first
	}
	return ""
}
