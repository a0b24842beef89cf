#!/usr/bin/env bash
# `make run`: on the local cluster started by `make cluster`, install
# Capstan's CRDs and the argocd namespace, publish the three demo apps of
# examples/ (a plain directory, a Kustomize app and a Helm chart) in one local
# Git repository, register an Application for each, start Capstan and wait
# until all of them are Synced and Healthy. Safe to run again over an existing
# cluster: the repository is published anew and the Applications re-applied.
set -euo pipefail

kubectl="$1"
kubeconfig="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
local_dir="$root/.local"
k() { "$kubectl" --kubeconfig "$kubeconfig" "$@"; }

# Each demo app is the directory of the same name under examples/, published
# at the root of the demo repository, synced into a namespace of that name.
apps=(guestbook kustomize-guestbook helm-guestbook)
repo="$local_dir/git/demo.git"
wait_seconds=120

echo "==> installing CRDs (server-side apply: the Application CRD is too large for client-side apply)"
k apply --server-side --force-conflicts -k "$root/manifests/crds/"
for _ in $(seq 1 60); do
	k wait --for condition=Established --timeout=5s crd/applications.argoproj.io crd/appprojects.argoproj.io >/dev/null 2>&1 && break
	sleep 1
done

echo "==> creating namespace argocd"
k create namespace argocd --dry-run=client -o yaml | k apply -f -

echo "==> publishing ${apps[*]} from examples/ as Git repository $repo"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$repo"
mkdir -p "$(dirname "$repo")"
git init -q --bare -b main "$repo"
git clone -q "$repo" "$work/demo" 2>/dev/null
for app in "${apps[@]}"; do
	cp -R "$root/examples/$app" "$work/demo/$app"
done
git -C "$work/demo" add -A
git -C "$work/demo" -c user.name=capstan -c user.email=capstan@localhost commit -q -m "demo apps: ${apps[*]}"
git -C "$work/demo" push -q origin main
revision="$(git -C "$work/demo" rev-parse HEAD)"

echo "==> registering the default AppProject and the Applications ${apps[*]}"
{
	cat <<YAML
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
YAML
	for app in "${apps[@]}"; do
		cat <<YAML
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: $app
  namespace: argocd
spec:
  project: default
  source:
    repoURL: file://$repo
    targetRevision: main
    path: $app
  destination:
    server: https://kubernetes.default.svc
    namespace: $app
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
    - CreateNamespace=true
YAML
	done
} | k apply -f -

echo "==> starting Capstan (capstan run: controller with the repo server in-process)"
pidfile="$local_dir/capstan.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	kill "$(cat "$pidfile")"; sleep 1
fi
KUBECONFIG="$kubeconfig" nohup "$root/bin/capstan" run --namespace argocd --root "$local_dir/capstan-repos" --app-resync 10s \
	>"$local_dir/capstan.log" 2>&1 &
echo $! >"$pidfile"

# app_state prints sync/health of an Application, and the revision it is
# synced to when that is not the commit just pushed (a status left over from
# an earlier run does not count).
app_state() {
	local s
	s="$(k get applications.argoproj.io -n argocd "$1" -o jsonpath='{.status.sync.status}/{.status.health.status}@{.status.sync.revision}' 2>/dev/null || true)"
	if [ "${s#*@}" = "$revision" ]; then
		echo "${s%@*}"
	else
		echo "${s%@*} (revision '${s#*@}', want $revision)"
	fi
}

echo "==> waiting up to ${wait_seconds}s for ${apps[*]} to be Synced and Healthy at ${revision:0:12}"
start=$SECONDS
ready=false
while [ $((SECONDS - start)) -lt "$wait_seconds" ]; do
	ready=true
	for app in "${apps[@]}"; do
		[ "$(app_state "$app")" = "Synced/Healthy" ] || { ready=false; break; }
	done
	$ready && break
	sleep 1
done
if ! $ready; then
	echo "not every Application is Synced/Healthy after ${wait_seconds}s:" >&2
	for app in "${apps[@]}"; do
		printf '  %-22s %s\n' "$app" "$(app_state "$app")" >&2
		# Rendering and sync errors are reported as conditions, not in the log.
		k get applications.argoproj.io -n argocd "$app" \
			-o jsonpath='{range .status.conditions[*]}{"      "}{.type}: {.message}{"\n"}{end}' >&2 2>/dev/null || true
	done
	echo "last lines of Capstan's log ($local_dir/capstan.log):" >&2
	tail -30 "$local_dir/capstan.log" >&2
	exit 1
fi
echo "all ${#apps[@]} Applications Synced and Healthy after $((SECONDS - start))s"

echo
k get applications.argoproj.io -n argocd
for app in "${apps[@]}"; do
	echo
	echo "--- namespace $app"
	k get deployments,services,pods -n "$app"
done
cat <<MSG

Done. What is where:
  kubeconfig       $kubeconfig
  kubectl          $kubectl --kubeconfig $kubeconfig get applications -n argocd
  demo repository  file://$repo
                   guestbook/            plain manifests (Application guestbook)
                   kustomize-guestbook/  Kustomize app   (Application kustomize-guestbook)
                   helm-guestbook/       Helm chart      (Application helm-guestbook)
  sources          examples/ in this work tree (published anew by every make run)
  cluster logs     $local_dir/cluster/logs/
  capstan log      $local_dir/capstan.log   (one JSON line per reconcile)
  web UI           https://localhost:8080/   (user admin; self-signed certificate: accept it in the browser)
  API server       https://localhost:8080/api/version   (self-signed certificate: curl -k)
  admin password   $kubectl --kubeconfig $kubeconfig -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d
  metrics          http://localhost:8082/metrics

Try it: a commit to any of the three directories syncs its Application, and
Capstan reverts a change made in the cluster (selfHeal):
  cd "\$(mktemp -d)" && git clone -q $repo demo && cd demo
  sed -i 's/replicas: 2/replicas: 3/' guestbook/guestbook-ui-deployment.yaml
  sed -i 's/newTag: "1.27"/newTag: "1.28"/' kustomize-guestbook/kustomization.yaml
  sed -i 's/replicaCount: 1/replicaCount: 2/' helm-guestbook/values.yaml
  git commit -qam "scale and bump" && git push -q
  $kubectl --kubeconfig $kubeconfig get applications -n argocd -w

The CLI, as with Argo CD's:
  bin/capstan login localhost:8080 --insecure --username admin --password "\$($kubectl --kubeconfig $kubeconfig -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d)"
  bin/capstan app list
  bin/capstan app get guestbook -o tree
  bin/capstan app diff guestbook

Stop everything with: make cluster-down
MSG
