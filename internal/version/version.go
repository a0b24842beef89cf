// Package version reports what build of Capstan is running. The linker sets
// the variables; see the Makefile's LDFLAGS.
package version

import (
	"fmt"
	"runtime"
)

// Set at link time with -X. The defaults describe a plain "go build".
var (
	version      = "v0.0.0-dev"
	gitCommit    = "unknown"
	gitTreeState = "unknown"
	buildDate    = "1970-01-01T00:00:00Z"
)

// Info describes one build. The JSON keys match Argo CD's version output so
// scripts written for `argocd version -o json` keep working.
type Info struct {
	Version      string `json:"Version"`
	BuildDate    string `json:"BuildDate"`
	GitCommit    string `json:"GitCommit"`
	GitTreeState string `json:"GitTreeState"`
	GoVersion    string `json:"GoVersion"`
	Compiler     string `json:"Compiler"`
	Platform     string `json:"Platform"`
}

// Get returns the running build's Info.
func Get() Info {
	return Info{
		Version:      version,
		BuildDate:    buildDate,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}

// String is the version with a short commit, such as v0.1.0+1a2b3c4.
func (i Info) String() string {
	if len(i.GitCommit) >= 7 {
		return i.Version + "+" + i.GitCommit[:7]
	}
	return i.Version
}
