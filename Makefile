# Capstan's build. `make help` lists the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := build

# go.mod names Go 1.27 (Argo CD 3.6's module needs it). The go command
# fetches this release of it from the module proxy on first use (about
# 76 MB), whatever Go the machine starts with.
export GOTOOLCHAIN := go1.27.3

# The Kubernetes release the local clusters run; tools/kube/go.mod pins the same one.
KUBE_VERSION ?= v1.36.3
KUBE_BIN     := $(CURDIR)/bin/kube/$(KUBE_VERSION)
KUBE_TOOLS   := kube-apiserver kube-controller-manager kube-scheduler kubectl kwok etcd
KUBECTL      := $(KUBE_BIN)/kubectl
LOCAL        := $(CURDIR)/.local

CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
STATICCHECK    := go run honnef.co/go/tools/cmd/staticcheck@v0.8.2

GIT_COMMIT  := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
GIT_TREE    := $(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo clean || echo dirty)
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null | grep '^v' || echo v0.1.0-dev)
BUILD_DATE  := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/capstan-cd/capstan/internal/version
LDFLAGS     := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) \
               -X $(VERSION_PKG).gitTreeState=$(GIT_TREE) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)

export CAPSTAN_KUBE_BIN := $(KUBE_BIN)
# Dex, the OpenID provider the SSO tests log in through; tools/dex/go.mod pins it.
DEX_BIN := $(CURDIR)/bin/dex
export CAPSTAN_DEX_BIN := $(DEX_BIN)/dex
# Argo CD's own CLI, which the compatibility tests drive; tools/argocd/go.mod pins it.
ARGOCD_BIN := $(CURDIR)/bin/argocd
export CAPSTAN_ARGOCD_BIN := $(ARGOCD_BIN)/argocd
# Argo CD's install manifests and CRDs; tools/argocd-manifests/go.mod pins the release.
ARGOCD_MANIFESTS := $(CURDIR)/bin/argocd-manifests
export CAPSTAN_ARGOCD_MANIFESTS := $(ARGOCD_MANIFESTS)
# Argo CD Image Updater's CRD and sample objects; tools/image-updater-manifests/go.mod pins the release.
IMAGE_UPDATER_MANIFESTS := $(CURDIR)/bin/image-updater-manifests
export CAPSTAN_IMAGE_UPDATER_MANIFESTS := $(IMAGE_UPDATER_MANIFESTS)
# Gitea, the real SCM server of the ApplicationSet generator tests; tools/gitea/go.mod pins it.
GITEA_BIN := $(CURDIR)/bin/gitea
export CAPSTAN_GITEA_BIN := $(GITEA_BIN)/gitea
# Mailpit, the SMTP server the notification tests mail to; tools/mailpit/go.mod pins it.
MAILPIT_BIN := $(CURDIR)/bin/mailpit
export CAPSTAN_MAILPIT_BIN := $(MAILPIT_BIN)/mailpit
# Kustomize's own CLI, a kustomize.path.<version> program in the tests; tools/kustomize/go.mod pins it.
KUSTOMIZE_BIN := $(CURDIR)/bin/kustomize
export CAPSTAN_KUSTOMIZE_BIN := $(KUSTOMIZE_BIN)/kustomize

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 16

.PHONY: build
build: ## Build bin/capstan.
	go build -ldflags '$(LDFLAGS)' -o bin/capstan ./cmd/capstan

.PHONY: image
IMAGE_TAG ?= $(VERSION)
image: $(DEX_BIN)/dex ## Build the container image without Docker into bin/image (OCI layout oci/, capstan.tar for docker load); REGISTRY=host/org also pushes $(REGISTRY)/capstan:$(IMAGE_TAG).
	@mkdir -p bin/image
	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags '-s -w $(LDFLAGS)' -o bin/image/capstan ./cmd/capstan
	go run ./hack/image -binary bin/image/capstan -with $(DEX_BIN)/dex -out bin/image -tag $(IMAGE_TAG) $(if $(REGISTRY),-push $(REGISTRY)/capstan:$(IMAGE_TAG))

.PHONY: kube
kube: $(KUBE_BIN)/.built $(KUBE_BIN)/kwok-crds.yaml ## Build the pinned Kubernetes binaries into bin/kube/<version> (once).

$(KUBE_BIN)/.built: tools/kube/go.mod tools/kube/go.sum tools/kube/cmd/etcd/main.go tools/kube/cmd/kwok-stages/main.go
	@echo "Building Kubernetes $(KUBE_VERSION) binaries into $(KUBE_BIN) (about 10 minutes the first time)..."
	@mkdir -p $(KUBE_BIN)
	cd tools/kube && go build -trimpath -ldflags='-s -w' -o $(KUBE_BIN)/ tool ./cmd/etcd
	cd tools/kube && go run ./cmd/kwok-stages $(KUBE_BIN)/kwok-stages.yaml
	@touch $@

# The kwok resources the local clusters serve, from the same kwok module.
$(KUBE_BIN)/kwok-crds.yaml: tools/kube/go.mod tools/kube/go.sum tools/kube/cmd/kwok-crds/main.go
	@mkdir -p $(KUBE_BIN)
	cd tools/kube && go run ./cmd/kwok-crds $@

.PHONY: generate
generate: ## Regenerate deepcopy code and CRD manifests from api/, and the install files.
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./api/... output:crd:artifacts:config=manifests/crds
	$(MAKE) --no-print-directory manifests

.PHONY: manifests
manifests: ## Render the Kustomize overlays under manifests/ into install.yaml, namespace-install.yaml, core-install.yaml, ha/install.yaml (and the Helm chart's copy of install.yaml).
	go run ./hack/genmanifests manifests

.PHONY: docs
docs: ## Regenerate the references under docs/reference (CLI, settings keys, API operations, metrics) from the code.
	go run ./hack/gendocs .

.PHONY: check-generated
check-generated: ## Fail when generated files are not what their sources generate (regenerated in a copy of the tree; nothing here is changed).
	@hack/check-generated.sh

.PHONY: lint
lint: ## gofmt, go vet and staticcheck.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(STATICCHECK) ./...

.PHONY: test
test: deps kube dex argocd argocd-manifests image-updater-manifests mailpit gitea kustomize lint check-generated ## Everything CI checks: lint, generated files, all tests with -race.
	go test -race -count=1 -timeout 25m ./...

.PHONY: screenshots
# SCREENSHOTS are the pages docs/screenshots shows, each light, dark and
# in a phone's width.
SCREENSHOTS := applications app-graph app-network app-pods diff terminal sync-dialog repositories certificates project appsets
screenshots: kube ## Refresh the web UI's screenshots in docs/screenshots from its browser tests (each page light, dark and 390 pixels wide).
	rm -rf .local/screenshots && mkdir -p .local/screenshots docs/screenshots
	CAPSTAN_UI_SCREENSHOTS=$(CURDIR)/.local/screenshots go test -count=1 -run 'TestUIApplicationsList|TestUIApplicationPage|TestUICreateAppAndRepositories|TestUISettingsPages|TestUIWithController|TestUIApplicationSets' ./internal/server/ ./internal/server/ui/
	for s in $(SCREENSHOTS); do for v in "" -dark -narrow; do cp .local/screenshots/$$s$$v.png docs/screenshots/; done; done

.PHONY: test-short
test-short: ## The unit tests only, in a minute or two: no local cluster is started and the tests that need one skip.
	go test -short -count=1 ./...

.PHONY: chaos
CHAOS_ITERATIONS ?= 100
CHAOS_OUTAGES ?= 20
chaos: kube ## The long fault suite: capstan killed at 100 random points of its syncs, API server outages of up to 60 s mid-sync (make test runs a short slice).
	go test -count=1 -timeout 150m -v ./chaos -args -chaos.iterations=$(CHAOS_ITERATIONS) -chaos.outage=60s -chaos.outages=$(CHAOS_OUTAGES)

.PHONY: fuzz
FUZZTIME ?= 60s
fuzz: ## Fuzz every parser of outside input for FUZZTIME each (their seed corpora run in make test).
	@set -e; for pkg in $$(go list ./...); do \
		for target in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target"; go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

.PHONY: dex
dex: $(DEX_BIN)/dex ## Build Dex (the SSO tests' OpenID provider) into bin/dex.

$(DEX_BIN)/dex: tools/dex/go.mod tools/dex/go.sum
	@mkdir -p $(DEX_BIN)
	cd tools/dex && go build -trimpath -ldflags='-s -w' -o $(DEX_BIN)/ tool

.PHONY: argocd
argocd: $(ARGOCD_BIN)/argocd ## Build Argo CD's CLI (the compatibility tests' client) into bin/argocd.

$(ARGOCD_BIN)/argocd: tools/argocd/go.mod tools/argocd/go.sum
	@echo "Building Argo CD's CLI into $(ARGOCD_BIN) (several minutes the first time)..."
	@mkdir -p $(ARGOCD_BIN)
	cd tools/argocd && v=$$(go list -m -f '{{.Version}}' github.com/argoproj/argo-cd/v3) && \
	  go build -trimpath -ldflags="-s -w -X github.com/argoproj/argo-cd/v3/common.version=$${v#v}" -o $(ARGOCD_BIN)/argocd github.com/argoproj/argo-cd/v3/cmd

.PHONY: argocd-manifests
argocd-manifests: $(ARGOCD_MANIFESTS)/.fetched $(ARGOCD_MANIFESTS)/notifications-catalog.yaml $(ARGOCD_MANIFESTS)/docs/.fetched ## Copy Argo CD's install manifests, CRDs, notifications catalog and documented ConfigMaps (the takeover, notification and settings tests' reference) into bin/argocd-manifests.

# Argo CD's documented argocd-cm and argocd-cmd-params-cm, every key set.
$(ARGOCD_MANIFESTS)/docs/.fetched: tools/argocd-manifests/go.mod tools/argocd-manifests/go.sum | $(ARGOCD_MANIFESTS)/.fetched
	mkdir -p $(ARGOCD_MANIFESTS)/docs
	for f in argocd-cm.yaml argocd-cmd-params-cm.yaml; do \
	  cp "$$(cd tools/argocd-manifests && go mod download github.com/argoproj/argo-cd/v3 && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)/docs/operator-manual/$$f" $(ARGOCD_MANIFESTS)/docs/; done
	chmod -R u+w $(ARGOCD_MANIFESTS)/docs
	@touch $@

# Argo CD's catalog of notification triggers and templates, as a ConfigMap.
$(ARGOCD_MANIFESTS)/notifications-catalog.yaml: tools/argocd-manifests/go.mod tools/argocd-manifests/go.sum | $(ARGOCD_MANIFESTS)/.fetched
	cp "$$(cd tools/argocd-manifests && go mod download github.com/argoproj/argo-cd/v3 && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)/notifications_catalog/install.yaml" $@
	chmod u+w $@

$(ARGOCD_MANIFESTS)/.fetched: tools/argocd-manifests/go.mod tools/argocd-manifests/go.sum
	cd tools/argocd-manifests && go mod download github.com/argoproj/argo-cd/v3
	rm -rf $(ARGOCD_MANIFESTS) && mkdir -p $(ARGOCD_MANIFESTS)
	cp -R "$$(cd tools/argocd-manifests && go mod download github.com/argoproj/argo-cd/v3 && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)/manifests/." $(ARGOCD_MANIFESTS)/
	chmod -R u+w $(ARGOCD_MANIFESTS)
	@touch $@

.PHONY: image-updater-manifests
image-updater-manifests: $(IMAGE_UPDATER_MANIFESTS)/.fetched ## Copy Argo CD Image Updater's CRD and sample ImageUpdaters (the ImageUpdater tests' reference) into bin/image-updater-manifests.

$(IMAGE_UPDATER_MANIFESTS)/.fetched: tools/image-updater-manifests/go.mod tools/image-updater-manifests/go.sum
	cd tools/image-updater-manifests && go mod download github.com/argoproj-labs/argocd-image-updater
	rm -rf $(IMAGE_UPDATER_MANIFESTS) && mkdir -p $(IMAGE_UPDATER_MANIFESTS)
	dir="$$(cd tools/image-updater-manifests && go mod download github.com/argoproj-labs/argocd-image-updater && go list -m -f '{{.Dir}}' github.com/argoproj-labs/argocd-image-updater)"; \
	  cp -R "$$dir/config/crd/bases" $(IMAGE_UPDATER_MANIFESTS)/crds && cp -R "$$dir/config/samples" $(IMAGE_UPDATER_MANIFESTS)/samples
	chmod -R u+w $(IMAGE_UPDATER_MANIFESTS)
	@touch $@

.PHONY: gitea
gitea: $(GITEA_BIN)/gitea ## Build Gitea (the SCM provider and pull request generator tests' server) into bin/gitea, with its options and templates.

$(GITEA_BIN)/gitea: tools/gitea/go.mod tools/gitea/go.sum
	mkdir -p $(GITEA_BIN)
	rm -rf $(GITEA_BIN)/options $(GITEA_BIN)/templates
	dir="$$(cd tools/gitea && go mod download code.gitea.io/gitea && go list -m -f '{{.Dir}}' code.gitea.io/gitea)"; \
	  cp -R "$$dir/options" "$$dir/templates" $(GITEA_BIN)/ && chmod -R u+w $(GITEA_BIN)/options $(GITEA_BIN)/templates
	cd tools/gitea && v="$$(go list -m -f '{{.Version}}' code.gitea.io/gitea)" && \
	  go build -trimpath -ldflags="-s -w -X main.Version=$${v#v}" -tags 'sqlite sqlite_unlock_notify' -o $(GITEA_BIN)/gitea code.gitea.io/gitea

.PHONY: mailpit
mailpit: $(MAILPIT_BIN)/mailpit ## Build Mailpit (the notification tests' SMTP server) into bin/mailpit.

$(MAILPIT_BIN)/mailpit: tools/mailpit/go.mod tools/mailpit/go.sum
	@mkdir -p $(MAILPIT_BIN)
	cd tools/mailpit && go build -trimpath -ldflags='-s -w' -o $(MAILPIT_BIN)/ tool

.PHONY: kustomize
kustomize: $(KUSTOMIZE_BIN)/kustomize ## Build Kustomize's CLI (a per-version Kustomize program in the tests) into bin/kustomize.

$(KUSTOMIZE_BIN)/kustomize: tools/kustomize/go.mod tools/kustomize/go.sum
	@mkdir -p $(KUSTOMIZE_BIN)
	cd tools/kustomize && go build -trimpath -ldflags='-s -w' -o $(KUSTOMIZE_BIN)/ tool

.PHONY: argocd-api
argocd-api: ## Rewrite Argo CD's API schema (internal/argoapi/argocd.binpb) from the newest Argo CD module Capstan's go.mod requires, and the CLI tree (cmd/capstan/commands/testdata/argocd-cli.txt) from the one tools/argocd pins.
	cd tools/argocd && go run ./cmd/argocd-api -source "$$(cd $(CURDIR) && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)" $(CURDIR)/internal/argoapi/argocd.binpb
	cd tools/argocd && go run ./cmd/argocd-cli $(CURDIR)/cmd/capstan/commands/testdata/argocd-cli.txt

.PHONY: deps
deps: ## Install the Debian packages the build and tests need (when missing).
	@hack/install-deps.sh

.PHONY: bench
N ?= 1000
BENCH_TIMEOUT ?= 30m
bench: kube $(if $(filter argocd,$(TARGET)),$(ARGOCD_BIN)/argocd) ## Run the Go benchmarks, then the N-application controller benchmark (N=1000 by default); TARGET=argocd instead runs the floor, capstan run and Argo CD's controller and repo server side by side (BENCH_TIMEOUT per phase).
ifeq ($(TARGET),argocd)
	go run ./bench/apps -n $(N) -timeout $(BENCH_TIMEOUT) -argocd $(ARGOCD_BIN)/argocd
else
	go test -run '^$$' -bench . -benchmem ./...
	go run ./bench/apps -n $(N)
endif

.PHONY: bench-check
bench-check: kube ## Measure the API server's floor and the controller on 1,000 apps; fail over the ratio and request counts in bench/apps/targets.json.
	go run ./bench/apps -check bench/apps/targets.json

.PHONY: cluster
cluster: kube ## Start a local cluster in the background; kubeconfig at .local/kubeconfig.
	@go build -o bin/localcluster ./hack/localcluster
	@bin/localcluster up --dir $(LOCAL)
	@ln -sf kube/$(KUBE_VERSION)/kubectl bin/kubectl
	@echo "try: bin/kubectl --kubeconfig .local/kubeconfig get nodes"

.PHONY: cluster-down
cluster-down: ## Stop Capstan and the local cluster started by `make cluster` or `make run`.
	@if [ -f $(LOCAL)/capstan.pid ]; then kill $$(cat $(LOCAL)/capstan.pid) 2>/dev/null || true; rm -f $(LOCAL)/capstan.pid; echo "capstan stopped"; fi
	@if [ -x bin/localcluster ]; then bin/localcluster down --dir $(LOCAL); else echo "no local cluster tool built; nothing to stop"; fi

.PHONY: run
run: build cluster ## Build, start a local cluster and Capstan, deploy three demo Applications and wait until they are Synced and Healthy.
	@hack/run.sh "$(KUBECTL)" "$(LOCAL)/kubeconfig"

.PHONY: clean
clean: cluster-down ## Remove build outputs (keeps the Kubernetes binaries).
	rm -f bin/capstan bin/localcluster
