#!/usr/bin/env bash
# Installs the Debian packages Capstan's build and tests need, when missing.
# Go itself is expected on PATH; the Makefile has it fetch the Go release
# go.mod needs (GOTOOLCHAIN) from the module proxy.
set -euo pipefail

# command -> Debian package
declare -A want=(
	[git]=git
	[git-lfs]=git-lfs           # repositories with enableLfs, and their tests
	[make]=make
	[gcc]=gcc   # go test -race needs cgo
	[redis-server]=redis-server # the Redis manifest cache's tests
	[ssh]=openssh-client        # Git over SSH
	[sshd]=openssh-server       # the Git-over-SSH tests' server
	[mmdebstrap]=mmdebstrap     # make image: the image's Debian root file system
	[chroot]=coreutils          # the image test runs programs inside the image
	[unshare]=util-linux        # the install tests run each container in namespaces of its own
	[hostname]=hostname         # ... named after its pod
	[chromium]=chromium         # the web UI's tests drive a real browser
	[gpg]=gpg                   # the image updater's OpenPGP-signed commits
)

missing=()
for cmd in "${!want[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "installing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
