package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The image's user: Argo CD's images run as argocd, uid 999, and so do
// the install manifests' security contexts.
const (
	userName = "argocd"
	userID   = 999
	homeDir  = "/home/argocd"
)

// packages are what Capstan runs besides itself: git (and git-lfs, for
// repositories with enableLfs) for repositories,
// ssh for Git over SSH, and the CA certificates HTTPS needs.
var packages = []string{"git", "git-lfs", "openssh-client", "ca-certificates"}

// makeRootFS writes a minimal Debian root file system of the host's
// release, with packages and the image's user, as a tar file at out.
// mmdebstrap takes the mirror from the host's apt sources.
func makeRootFS(ctx context.Context, out string) error {
	suite, err := hostSuite()
	if err != nil {
		return err
	}
	args := []string{
		"--variant=essential",
		"--include=" + strings.Join(packages, ","),
		// Documentation, manual pages and translations are not run.
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		"--dpkgopt=path-exclude=/usr/share/info/*",
		fmt.Sprintf(`--customize-hook=echo '%s:x:%d:%d::%s:/usr/sbin/nologin' >> "$1/etc/passwd"`, userName, userID, userID, homeDir),
		fmt.Sprintf(`--customize-hook=echo '%s:x:%d:' >> "$1/etc/group"`, userName, userID),
		fmt.Sprintf(`--customize-hook=mkdir -p "$1%s" && chown %d:%d "$1%s"`, homeDir, userID, userID, homeDir),
		// apt's lists are not needed at run time.
		`--customize-hook=rm -rf "$1/var/lib/apt/lists" "$1/var/cache/apt"`,
		"--", suite, out,
	}
	cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mmdebstrap (hack/install-deps.sh installs it): %w", err)
	}
	return nil
}

// hostSuite is the code name of the host's release (bookworm, ...), whose
// apt sources mmdebstrap uses.
func hostSuite() (string, error) {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VERSION_CODENAME="); ok && v != "" {
			return strings.Trim(v, `"`), nil
		}
	}
	return "", fmt.Errorf("/etc/os-release names no VERSION_CODENAME: build the image on Debian")
}
