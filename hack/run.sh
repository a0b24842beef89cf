#!/usr/bin/env bash
# `make run`: on the local cluster started by `make cluster`, install
# Capstan's CRDs and the argocd namespace, publish the demo manifests in a
# local Git repository and register a demo Application for them.
set -euo pipefail

kubectl="$1"
kubeconfig="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
local_dir="$root/.local"
k() { "$kubectl" --kubeconfig "$kubeconfig" "$@"; }

echo "==> installing CRDs (server-side apply: the Application CRD is too large for client-side apply)"
k apply --server-side --force-conflicts -f "$root/manifests/crds/"
for _ in $(seq 1 60); do
	k wait --for condition=Established --timeout=5s crd/applications.argoproj.io crd/appprojects.argoproj.io >/dev/null 2>&1 && break
	sleep 1
done

echo "==> creating namespace argocd"
k create namespace argocd --dry-run=client -o yaml | k apply -f -

echo "==> publishing examples/guestbook as Git repository $local_dir/git/guestbook.git"
repo="$local_dir/git/guestbook.git"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$repo"
git init -q --bare -b main "$repo"
git clone -q "$repo" "$work/guestbook" 2>/dev/null
mkdir -p "$work/guestbook/guestbook"
cp "$root"/examples/guestbook/*.yaml "$work/guestbook/guestbook/"
git -C "$work/guestbook" add -A
git -C "$work/guestbook" -c user.name=capstan -c user.email=capstan@localhost commit -q -m "guestbook demo"
git -C "$work/guestbook" push -q origin main

echo "==> registering the default AppProject and the guestbook Application"
k apply -f - <<YAML
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations:
  - server: '*'
    namespace: '*'
  clusterResourceWhitelist:
  - group: '*'
    kind: '*'
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: file://$repo
    targetRevision: main
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
    - CreateNamespace=true
YAML

echo "==> starting Capstan (capstan run: controller with the repo server in-process)"
pidfile="$local_dir/capstan.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	kill "$(cat "$pidfile")"; sleep 1
fi
KUBECONFIG="$kubeconfig" nohup "$root/bin/capstan" run --namespace argocd --root "$local_dir/capstan-repos" --app-resync 10s \
	>"$local_dir/capstan.log" 2>&1 &
echo $! >"$pidfile"

echo "==> waiting for the guestbook Application to be Synced and Healthy"
status=""
for _ in $(seq 1 120); do
	status="$(k get applications.argoproj.io -n argocd guestbook -o jsonpath='{.status.sync.status}/{.status.health.status}' 2>/dev/null || true)"
	[ "$status" = "Synced/Healthy" ] && break
	sleep 1
done
if [ "$status" != "Synced/Healthy" ]; then
	echo "guestbook is '$status' after 2 minutes; Capstan's log: $local_dir/capstan.log" >&2
	tail -20 "$local_dir/capstan.log" >&2
	exit 1
fi

echo
k get applications.argoproj.io -n argocd
echo
k get deployments,services -n guestbook
cat <<MSG

Done. What is where:
  kubeconfig       $kubeconfig
  kubectl          $kubectl --kubeconfig $kubeconfig get applications -n argocd
  demo repository  file://$repo
  cluster logs     $local_dir/cluster/logs/
  capstan log      $local_dir/capstan.log   (one JSON line per reconcile)

Try it: commit a change to the demo repository and watch it sync:
  git clone $repo /tmp/guestbook && cd /tmp/guestbook
  sed -i 's/replicas: 2/replicas: 3/' guestbook/guestbook-ui-deployment.yaml
  git commit -qam "scale" && git push -q
  $kubectl --kubeconfig $kubeconfig get deployment -n guestbook -w

Stop everything with: make cluster-down
MSG
