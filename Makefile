# kudo-ng — run `make help` for the targets.

include hack/versions.env

# The release that images and the OLM bundle describe.
VERSION ?= 0.1.0
IMAGE_TAG_BASE ?= ghcr.io/kudo-ng/kudo
# Image URL to use all building/pushing image targets.
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
BUNDLE_CHANNELS ?= alpha
BUNDLE_METADATA_OPTS ?= --channels=$(BUNDLE_CHANNELS) --default-channel=$(BUNDLE_CHANNELS)
# The file-based catalog that OperatorHub installs the bundle from.
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

LOCALBIN ?= $(CURDIR)/bin
GOOS := $(shell go env GOOS)
GOARCH := $(shell go env GOARCH)
# envtest's store layout, so KUBEBUILDER_ASSETS and setup-envtest agree.
ENVTEST_ASSETS ?= $(LOCALBIN)/k8s/$(KUBERNETES_VERSION)-$(GOOS)-$(GOARCH)

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUSTOMIZE ?= $(LOCALBIN)/kustomize
GINKGO ?= $(LOCALBIN)/ginkgo
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk
HELM ?= $(LOCALBIN)/helm
KUTTL ?= $(LOCALBIN)/kubectl-kuttl
KWOK ?= $(LOCALBIN)/kwok
ETCD ?= $(ENVTEST_ASSETS)/etcd
KUBECTL ?= $(ENVTEST_ASSETS)/kubectl
KUBE_APISERVER ?= $(ENVTEST_ASSETS)/kube-apiserver

# The local control plane of `make cluster-up`.
CLUSTER_DIR ?= $(LOCALBIN)/cluster
KUBECONFIG_LOCAL ?= $(CLUSTER_DIR)/kubeconfig

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen kustomize ## Generate CRDs, RBAC and webhooks from the markers, and config/release (kubectl kudo init).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	$(KUSTOMIZE) build config/default > config/release/kudo-ng.yaml

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	$(GOLANGCI_LINT) run

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and fix what it can.
	$(GOLANGCI_LINT) run --fix

.PHONY: test
test: generate manifests fmt vet lint test-unit test-fuzz test-bundle test-cluster test-e2e test-packages test-olm test-migration ## Everything CI runs: generate, lint, unit + envtest, 20 s of each fuzz target, the OLM bundle, local control plane, end to end, the packages' own tests, the bundle through OLM v0 and OLM v1, the switch from KUDO.

.PHONY: test-unit
test-unit: envtest-assets ## Unit tests and envtest suites (real kube-apiserver and etcd, no nodes), and the bench's own.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test $$(go list ./... | grep -v /test/) ./test/bench -coverprofile cover.out

.PHONY: test-bundle
test-bundle: bundle ## The OLM bundle is in sync with config/ and passes operator-framework/api's validators.
	@git diff --exit-code --stat -- bundle bundle.Dockerfile config || \
		{ echo "make bundle changed the files above: commit them" >&2; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- bundle config); \
		[[ -z $$untracked ]] || { echo "make bundle made files not committed: $$untracked" >&2; exit 1; }
	go test ./test/bundle/... -count=1

.PHONY: test-e2e
test-e2e: cluster-tools cosign chromium ## End to end on a local control plane of its own: the conformance packages, plans, failures.
	ENVTEST_ASSETS="$(ENVTEST_ASSETS)" go test ./test/e2e/... -count=1 -timeout 30m -v -ginkgo.v

.PHONY: test-olm
test-olm: cluster-tools olm-tools olm-v1-tools helm operator-sdk scorecard-test ## kudo-ng through OLM v0 and OLM v1, each on a local control plane of its own (bin/test-olm, bin/test-olm-v1): the catalog, the install (Subscription; ClusterCatalog and ClusterExtension), a package, the upgrade to the next bundle while a plan runs, the removal; operator-sdk run bundle and scorecard.
	ENVTEST_ASSETS="$(ENVTEST_ASSETS)" go test ./test/olm/... -p 1 -count=1 -timeout 40m -v -ginkgo.v

.PHONY: test-migration
test-migration: cluster-tools kudo-v0.19 ## The switch from KUDO v0.19 (its own manager, built from its module) with kubectl kudo init --upgrade, on a local control plane of its own (bin/test-migration): nothing runs again.
	ENVTEST_ASSETS="$(ENVTEST_ASSETS)" go test ./test/migration/... -count=1 -timeout 20m -v -ginkgo.v

.PHONY: test-packages
# KUDO_OPERATORS, the conformance corpus' directory (laid out as kudobuilder/operators' repository/;
# the corpus default ../shared/conformance when it exists, empty for none), reaches the script from the
# environment or the command line.
test-packages: cluster-tools kuttl ## The example packages' and the conformance packages' (KUDO_OPERATORS=DIR) own kuttl tests with kubectl kudo test, on a local control plane of their own with its real node (test/packages/expected-failures.txt).
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" KUTTL="$(KUTTL)" hack/test-packages.sh

.PHONY: test-update-golden
test-update-golden: ## Rewrite the renderer's golden files and the bad-package corpus's expected errors (review the diff).
	go test ./internal/render/ -run Golden -update
	go test ./internal/packages/ -run TestBadPackages -update

# Sizes of `make bench` (default BENCH_ARGS="-runs 20 -scale 100,300,1000"); the opt-in sizes:
# BENCH_ARGS="-scale 100,300,1000,3000,10000" (about three hours on 2 cores: at 10,000 kudo-ng's run took 24 minutes here,
# its floor 17, the sharded run 27; -helm-operator-max 1000 leaves out the helm-operator's 3,000, four times kudo-ng's).
BENCH_ARGS ?=
.PHONY: bench
bench: cluster-tools helm helm-operator ## Benchmarks on a fresh local control plane: plan latency vs floor and helm, scale vs floor and the helm-operator, API requests, render; writes docs/benchmarks.md and bin/bench.json.
	go test ./internal/... -run '^$$' -bench . -benchmem -count 6 | tee bin/bench-render.txt
	CLUSTER_REAL_NODE=false ENVTEST_ASSETS="$(ENVTEST_ASSETS)" go run ./test/bench -helm $(HELM) -helm-operator $(LOCALBIN)/helm-operator \
		-render bin/bench-render.txt $(BENCH_ARGS)

FUZZTIME ?= 2m
# The fuzzer minimizes each input that finds new coverage, in time quadratic
# in its size: Go's 60 s could take a worker for a whole CI run.
FUZZMINIMIZETIME ?= 10s
.PHONY: fuzz
fuzz: ## Run every fuzz target (func Fuzz* in a _test.go) for FUZZTIME (default 2m), one after the other; a crasher fails it and lands in the package's testdata/fuzz.
	FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) hack/fuzz.sh

.PHONY: test-fuzz
test-fuzz: ## Every fuzz target for 20 s, as CI runs them (make fuzz: 2 minutes each).
	$(MAKE) fuzz FUZZTIME=20s

.PHONY: test-cluster
test-cluster: cluster-tools ## Tests of the local control plane itself (its own cluster under bin/test-cluster).
	ENVTEST_ASSETS="$(ENVTEST_ASSETS)" go test ./test/cluster/... -count=1 -timeout 15m -v -ginkgo.v

##@ Build

.PHONY: build
build: generate fmt vet ## Build the manager and the kubectl-kudo plugin.
	go build -o bin/manager .
	go build -o bin/kubectl-kudo ./cmd/kubectl-kudo

# Where `make run` serves the admission webhooks, and keeps their certificate.
WEBHOOK_PORT ?= 9443
WEBHOOK_DIR ?= $(LOCALBIN)/webhook-local

.PHONY: run
run: manifests generate fmt vet kubectl kustomize ## Run the manager from your host against the current kubeconfig, webhooks included (flags: RUN_ARGS).
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" WEBHOOK_DIR="$(WEBHOOK_DIR)" WEBHOOK_PORT="$(WEBHOOK_PORT)" hack/webhook-local.sh
	go run . --webhook-cert-dir "$(WEBHOOK_DIR)" --webhook-host 127.0.0.1 --webhook-port $(WEBHOOK_PORT) $(RUN_ARGS)

.PHONY: undeploy-local-webhook
undeploy-local-webhook: kubectl ## Remove the webhook configuration `make run` points at the local manager.
	$(KUBECTL) delete mutatingwebhookconfiguration/kudo-mutating-webhook-configuration \
		validatingwebhookconfiguration/kudo-validating-webhook-configuration --ignore-not-found

# The image is built from the Dockerfile with no container engine (hack/image):
# its builder stage is this host's Go build, with the same flags.
MANAGER_LINUX ?= $(LOCALBIN)/manager-linux-$(GOARCH)
IMAGE_TAR ?= $(LOCALBIN)/image/manager.tar
IMAGE_TOOL = go run ./hack/image --dockerfile Dockerfile --binary manager=$(MANAGER_LINUX) --arch $(GOARCH)
# The local control plane's registry, on its real node's bridge (hack/cluster/node.sh):
# it never leaves this machine. Its TLS certificate is of the cluster's registry CA.
LOCAL_REGISTRY ?= 10.244.0.1:5000
LOCAL_REGISTRY_CA ?= $(CLUSTER_DIR)/pki/registry-ca.crt
LOCAL_IMG ?= $(LOCAL_REGISTRY)/kudo:v$(VERSION)
LOCAL_BUNDLE_IMG ?= $(LOCAL_REGISTRY)/kudo-bundle:v$(VERSION)
LOCAL_CATALOG_IMG ?= $(LOCAL_REGISTRY)/kudo-catalog:v$(VERSION)
# Asked once per make, on first use: every PUSH_* below reads it.
LOCAL_REGISTRY_UP = $(eval LOCAL_REGISTRY_UP := $(shell curl -fs -m 1 -o /dev/null --cacert $(LOCAL_REGISTRY_CA) \
	https://$(LOCAL_REGISTRY)/v2/ && echo up))$(LOCAL_REGISTRY_UP)
# $(call trusting,IMAGE) is the environment a Go client pulling or pushing
# IMAGE runs with: trusting the local registry's CA besides the system's if
# IMAGE is there.
trusting = $(if $(filter $(LOCAL_REGISTRY)/%,$(1)),SSL_CERT_FILE=$(LOCAL_REGISTRY_CA))
# $(call pushed,VAR,LOCAL) is the image a push of VAR's makes: LOCAL while the
# local registry answers, unless VAR is given (command line or environment);
# else VAR's.
pushed = $(if $(and $(filter file,$(origin $(1))),$(LOCAL_REGISTRY_UP)),$(2),$($(1)))
PUSH_IMG ?= $(call pushed,IMG,$(LOCAL_IMG))
PUSH_BUNDLE_IMG ?= $(call pushed,BUNDLE_IMG,$(LOCAL_BUNDLE_IMG))
PUSH_CATALOG_IMG ?= $(call pushed,CATALOG_IMG,$(LOCAL_CATALOG_IMG))
# The bundle image's build context: bundle/, its manager image the one docker-push pushes.
BUNDLE_CONTEXT ?= $(LOCALBIN)/bundle-image
BUNDLE_TOOL = go run ./hack/image --dockerfile bundle.Dockerfile --context $(BUNDLE_CONTEXT)
# The bundles the catalog holds, oldest first: each one's entry replaces the one before.
CATALOG_BUNDLES ?= $(PUSH_BUNDLE_IMG)
CATALOG_CONTEXT ?= $(LOCALBIN)/catalog-image
CATALOG_TOOL = go run ./hack/image --dockerfile hack/olm/catalog.Dockerfile --context $(CATALOG_CONTEXT) \
	--binary opm=$(LOCALBIN)/opm --binary grpc_health_probe=$(LOCALBIN)/grpc_health_probe

.PHONY: docker-build
docker-build: ## Build the manager image IMG from the Dockerfile into IMAGE_TAR, reproducibly; needs no container engine.
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH) go build -trimpath -buildvcs=false -ldflags="-s -w -buildid=" -o $(MANAGER_LINUX) .
	$(IMAGE_TOOL) --tag $(IMG) --output $(IMAGE_TAR)

.PHONY: docker-push
docker-push: docker-build ## Push the manager image: to the local control plane's registry as LOCAL_IMG while it runs and IMG is not given, else IMG with the Docker config's credentials; needs no container engine.
	$(call trusting,$(PUSH_IMG)) $(IMAGE_TOOL) --tag $(PUSH_IMG) --push

# KUDO v0.19's manager image, which test-migration runs and switches from.
KUDO_V019_IMG ?= $(LOCAL_REGISTRY)/kudo-v0.19-manager:v$(KUDO_V019_VERSION)

.PHONY: kudo-v0.19-push
kudo-v0.19-push: kudo-v0.19 ## Push KUDO v0.19's manager image (KUDO_V019_IMG) to the local control plane's registry.
	$(call trusting,$(KUDO_V019_IMG)) go run ./hack/image --dockerfile hack/kudo/manager.Dockerfile \
		--binary manager=$(LOCALBIN)/kudo-v0.19-manager --arch $(GOARCH) --tag $(KUDO_V019_IMG) --push

.PHONY: bundle
bundle: kustomize operator-sdk ## Generate the OLM bundle (bundle/, bundle.Dockerfile) from config/manifests and validate it; IMG becomes the release image.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(MAKE) --no-print-directory manifests
	$(OPERATOR_SDK) generate kustomize manifests -q --interactive=false
	$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle -q --overwrite --version $(VERSION) $(BUNDLE_METADATA_OPTS)
	@# The generation time would make every run differ from the committed bundle.
	sed -i '/^    createdAt: /d' bundle/manifests/kudo-ng.clusterserviceversion.yaml
	$(OPERATOR_SDK) bundle validate ./bundle --select-optional suite=operatorframework

.PHONY: bundle-build
bundle-build: ## Build the bundle image from bundle/ and bundle.Dockerfile into bin/image/bundle.tar, its manager image the one docker-push pushes; needs no container engine.
	rm -rf $(BUNDLE_CONTEXT) && mkdir -p $(BUNDLE_CONTEXT) && cp -R bundle $(BUNDLE_CONTEXT)/
	sed -i 's|$(IMG)|$(PUSH_IMG)|' $(BUNDLE_CONTEXT)/bundle/manifests/kudo-ng.clusterserviceversion.yaml
	$(BUNDLE_TOOL) --tag $(PUSH_BUNDLE_IMG) --output $(LOCALBIN)/image/bundle.tar

.PHONY: bundle-push
bundle-push: bundle-build ## Push the bundle image: to the local control plane's registry as LOCAL_BUNDLE_IMG while it runs and BUNDLE_IMG is not given, else BUNDLE_IMG.
	$(call trusting,$(PUSH_BUNDLE_IMG)) $(BUNDLE_TOOL) --tag $(PUSH_BUNDLE_IMG) --push

.PHONY: catalog-build
catalog-build: olm-tools ## Build the file-based catalog image of CATALOG_BUNDLES (opm init, render, channel alpha) into bin/image/catalog.tar; needs no container engine.
	LOCAL_REGISTRY=$(LOCAL_REGISTRY) LOCAL_REGISTRY_CA=$(LOCAL_REGISTRY_CA) hack/olm/catalog.sh $(CATALOG_CONTEXT) $(CATALOG_BUNDLES)
	$(CATALOG_TOOL) --tag $(PUSH_CATALOG_IMG) --output $(LOCALBIN)/image/catalog.tar

.PHONY: catalog-push
catalog-push: catalog-build ## Push the catalog image: to the local control plane's registry as LOCAL_CATALOG_IMG while it runs and CATALOG_IMG is not given, else CATALOG_IMG.
	$(call trusting,$(PUSH_CATALOG_IMG)) $(CATALOG_TOOL) --tag $(PUSH_CATALOG_IMG) --push

# operator-sdk's run bundle and scorecard against the local control plane. Their
# images come from its registry or the node: the index image `run bundle` adds
# the bundle to is OLM's opm image there (make olm-up pushes it), and the
# scorecard's tests run from an image built here.
RUN_BUNDLE_NAMESPACE ?= operators
NODE_BUSYBOX_IMG = kudo-ng.local/busybox:1
SCORECARD_NAMESPACE ?= default
SCORECARD_IMG = $(LOCAL_REGISTRY)/scorecard-test:v$(OPERATOR_SDK_VERSION)
SCORECARD_CONFIG = $(LOCALBIN)/scorecard/config.yaml

.PHONY: run-bundle
run-bundle: operator-sdk ## Install the bundle PUSH_BUNDLE_IMG with `operator-sdk run bundle` into RUN_BUNDLE_NAMESPACE on the local control plane with OLM.
	@# operator-sdk unpacks the bundle into its working directory.
	cd $(LOCALBIN) && $(call trusting,$(PUSH_BUNDLE_IMG)) $(OPERATOR_SDK) run bundle $(PUSH_BUNDLE_IMG) -n $(RUN_BUNDLE_NAMESPACE) \
		--index-image $(LOCAL_REGISTRY)/opm:v$(OPM_VERSION) --decompression-image $(NODE_BUSYBOX_IMG) --timeout 5m

.PHONY: cleanup-bundle
cleanup-bundle: operator-sdk ## Remove what run-bundle installed with `operator-sdk cleanup`, keeping the CRDs and so every Instance and what it made, as an uninstall through OLM does.
	$(OPERATOR_SDK) cleanup kudo-ng -n $(RUN_BUNDLE_NAMESPACE) --delete-all=false

.PHONY: scorecard
scorecard: operator-sdk scorecard-test ## Run the bundle's scorecard tests (basic and OLM suites) in SCORECARD_NAMESPACE on the local control plane, from an image of them built here.
	$(call trusting,$(SCORECARD_IMG)) go run ./hack/image --dockerfile hack/olm/scorecard-test.Dockerfile \
		--binary scorecard-test=$(LOCALBIN)/scorecard-test --tag $(SCORECARD_IMG) --push
	mkdir -p $(dir $(SCORECARD_CONFIG))
	sed 's|quay.io/operator-framework/scorecard-test:v$(OPERATOR_SDK_VERSION)|$(SCORECARD_IMG)|' bundle/tests/scorecard/config.yaml >$(SCORECARD_CONFIG)
	$(OPERATOR_SDK) scorecard bundle -n $(SCORECARD_NAMESPACE) --config $(SCORECARD_CONFIG) \
		--untar-image $(NODE_BUSYBOX_IMG) --storage-image $(NODE_BUSYBOX_IMG) --wait-time 180s

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize kubectl ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize kubectl ## Remove the CRDs. ignore-not-found=true ignores missing ones.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize kubectl ## Deploy the manager (image IMG) to the cluster of the current kubeconfig; self-signed webhook certificate without cert-manager. MULTI_TENANT=true: config/multi-tenant.
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" IMG="$(IMG)" MULTI_TENANT="$(MULTI_TENANT)" hack/deploy.sh apply

.PHONY: undeploy
undeploy: kustomize kubectl ## Remove the manager, its RBAC and webhooks; the CRDs stay (make uninstall). ignore-not-found=true ignores missing objects.
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" IMG="$(IMG)" MULTI_TENANT="$(MULTI_TENANT)" IGNORE_NOT_FOUND=$(ignore-not-found) hack/deploy.sh delete

.PHONY: deploy-shard
deploy-shard: kustomize kubectl ## Deploy one more manager (image IMG), for the Instances labelled sharding.kudo.dev/key=SHARD, beside make deploy's.
	@test -n "$(SHARD)" || { echo "deploy-shard: set SHARD, the shard's key" >&2; exit 2; }
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" IMG="$(IMG)" SHARD="$(SHARD)" hack/deploy.sh apply

.PHONY: undeploy-shard
undeploy-shard: kustomize kubectl ## Remove the manager of shard SHARD; its Instances wait for a manager of their shard.
	@test -n "$(SHARD)" || { echo "undeploy-shard: set SHARD, the shard's key" >&2; exit 2; }
	KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" IMG="$(IMG)" SHARD="$(SHARD)" IGNORE_NOT_FOUND=$(ignore-not-found) hack/deploy.sh delete

##@ Local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok; a real node: containerd, kubelet, kube-proxy)

.PHONY: cluster-up
cluster-up: cluster-tools $(if $(filter true,$(OLM)),olm-tools helm) $(if $(filter v1,$(OLM)),olm-v1-tools helm) ## Start the local control plane; writes bin/cluster/kubeconfig (CLUSTER_REAL_NODE=false: simulated nodes only; OLM=true: with OLM, OLM=v1: with OLM v1, on the real node alone).
ifeq ($(OLM),true)
	CLUSTER_DIR="$(CLUSTER_DIR)" CLUSTER_NODES=0 CLUSTER_REAL_NODE_TAINT=false hack/cluster/up.sh
	KUBECONFIG="$(KUBECONFIG_LOCAL)" LOCAL_REGISTRY=$(LOCAL_REGISTRY) LOCAL_REGISTRY_CA=$(LOCAL_REGISTRY_CA) hack/olm/up.sh
else ifeq ($(OLM),v1)
	CLUSTER_DIR="$(CLUSTER_DIR)" CLUSTER_NODES=0 CLUSTER_REAL_NODE_TAINT=false hack/cluster/up.sh
	KUBECONFIG="$(KUBECONFIG_LOCAL)" LOCAL_REGISTRY=$(LOCAL_REGISTRY) LOCAL_REGISTRY_CA=$(LOCAL_REGISTRY_CA) hack/olm/v1-up.sh
else
	CLUSTER_DIR="$(CLUSTER_DIR)" hack/cluster/up.sh
endif

.PHONY: olm-up
olm-up: olm-tools helm ## Install OLM on the local control plane (its real node untainted, no simulated nodes: OLM=true make cluster-up does it all).
	KUBECONFIG="$(KUBECONFIG_LOCAL)" LOCAL_REGISTRY=$(LOCAL_REGISTRY) LOCAL_REGISTRY_CA=$(LOCAL_REGISTRY_CA) hack/olm/up.sh

.PHONY: olm-v1-up
olm-v1-up: olm-v1-tools helm kustomize ## Install OLM v1 and cert-manager on the local control plane (its real node untainted, no simulated nodes: OLM=v1 make cluster-up does it all).
	KUBECONFIG="$(KUBECONFIG_LOCAL)" LOCAL_REGISTRY=$(LOCAL_REGISTRY) LOCAL_REGISTRY_CA=$(LOCAL_REGISTRY_CA) hack/olm/v1-up.sh

.PHONY: cluster-load-image
cluster-load-image: ## Import the image make docker-build wrote (IMAGE_TAR) into the local control plane's real node.
	ctr --address "$(CLUSTER_DIR)/node/containerd.sock" -n k8s.io images import "$(IMAGE_TAR)"

.PHONY: cluster-down
cluster-down: ## Stop the local control plane and remove its data.
	CLUSTER_DIR="$(CLUSTER_DIR)" hack/cluster/down.sh

.PHONY: demo
demo: cluster-up ## Local control plane, the manager's image run on its real node, first-operator's OperatorVersion and Instance.
	KUBECONFIG="$(KUBECONFIG_LOCAL)" KUBECTL="$(KUBECTL)" KUSTOMIZE="$(KUSTOMIZE)" IMG="$(IMG)" MAKE="$(MAKE)" hack/demo.sh

.PHONY: demo-down
demo-down: cluster-down ## Stop the demo: the manager and the local control plane.

##@ Offline toolchain (built from the Go module proxy, cached under bin/)

.PHONY: toolchain
toolchain: envtest-assets cluster-tools controller-gen kustomize ginkgo golangci-lint operator-sdk scorecard-test helm-operator kuttl kudo-v0.19 olm-tools olm-v1-tools helm ## Build every tool.

.PHONY: envtest-assets
envtest-assets: kubernetes etcd ## kube-apiserver, etcd and kubectl for envtest.

.PHONY: cluster-tools
cluster-tools: kubernetes etcd kwok kustomize registry coredns ## Everything the local control plane runs.

.PHONY: kubernetes
kubernetes: ## kube-apiserver, kube-controller-manager, kube-scheduler, kubectl.
	hack/tools/build-kubernetes.sh

.PHONY: kubectl
kubectl: kubernetes

.PHONY: etcd
etcd:
	hack/tools/gobuild.sh etcd $(ETCD_VERSION) go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
	mkdir -p $(ENVTEST_ASSETS) && ln -sfn $(LOCALBIN)/etcd-v$(ETCD_VERSION) $(ETCD)

.PHONY: kwok
kwok:
	hack/tools/gobuild.sh kwok $(KWOK_VERSION) sigs.k8s.io/kwok sigs.k8s.io/kwok/cmd/kwok

.PHONY: registry
registry: ## The reference OCI registry (distribution), which the local control plane's real node pulls from.
	LDFLAGS="-X github.com/distribution/distribution/v3/version.version=v$(REGISTRY_VERSION)" \
	hack/tools/gobuild.sh registry $(REGISTRY_VERSION) github.com/distribution/distribution/v3 github.com/distribution/distribution/v3/cmd/registry

.PHONY: coredns
coredns: ## The cluster's DNS, which the local control plane's real node runs on its bridge.
	hack/tools/gobuild.sh coredns $(COREDNS_VERSION) github.com/coredns/coredns github.com/coredns/coredns

.PHONY: controller-gen
controller-gen:
	hack/tools/gobuild.sh controller-gen $(CONTROLLER_TOOLS_VERSION) sigs.k8s.io/controller-tools sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: kustomize
kustomize:
	hack/tools/gobuild.sh kustomize $(KUSTOMIZE_VERSION) sigs.k8s.io/kustomize/kustomize/v5 sigs.k8s.io/kustomize/kustomize/v5

.PHONY: ginkgo
ginkgo:
	hack/tools/gobuild.sh ginkgo $(GINKGO_VERSION) github.com/onsi/ginkgo/v2 github.com/onsi/ginkgo/v2/ginkgo

.PHONY: golangci-lint
golangci-lint:
	hack/tools/gobuild.sh golangci-lint $(GOLANGCI_LINT_VERSION) github.com/golangci/golangci-lint/v2 github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: helm
helm: ## helm, for the benchmarks' comparison (make bench builds it).
	hack/tools/gobuild.sh helm $(HELM_VERSION) helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm

.PHONY: chromium
chromium: ## Debian's Chromium, which the end-to-end suite drives headless to test kubectl kudo dashboard (apt-get install, as root).
	./hack/chromium.sh

.PHONY: cosign
cosign: ## cosign, which the end-to-end suite checks kudo-ng's package signatures against, both ways.
	hack/tools/gobuild.sh cosign $(COSIGN_VERSION) github.com/sigstore/cosign/v3 github.com/sigstore/cosign/v3/cmd/cosign

.PHONY: helm-operator
helm-operator: ## operator-sdk's helm-operator, the peer make bench measures kudo-ng against.
	hack/tools/gobuild.sh helm-operator $(OPERATOR_SDK_VERSION) github.com/operator-framework/operator-sdk \
	github.com/operator-framework/operator-sdk/cmd/helm-operator -tags containers_image_openpgp

.PHONY: operator-sdk
operator-sdk:
	LDFLAGS="$(foreach v,Version GitVersion ImageVersion,-X github.com/operator-framework/operator-sdk/internal/version.$(v)=v$(OPERATOR_SDK_VERSION))" \
	hack/tools/gobuild.sh operator-sdk $(OPERATOR_SDK_VERSION) github.com/operator-framework/operator-sdk github.com/operator-framework/operator-sdk/cmd/operator-sdk -tags containers_image_openpgp

OLM_REPLACES = github.com/openshift/api => github.com/openshift/api $(OLM_OPENSHIFT_API);github.com/openshift/client-go => github.com/openshift/client-go $(OLM_OPENSHIFT_CLIENT_GO)

.PHONY: scorecard-test
scorecard-test: ## The scorecard's tests, for make scorecard.
	hack/tools/gobuild.sh scorecard-test $(OPERATOR_SDK_VERSION) github.com/operator-framework/operator-sdk \
	github.com/operator-framework/operator-sdk/images/scorecard-test -tags containers_image_openpgp

.PHONY: olm-tools
olm-tools: ## OLM's operators (olm, catalog, package-server), its bundle unpackers (copy-content, cpb), opm and the catalog's probe (grpc_health_probe), for OLM on the local control plane.
	$(foreach cmd,olm catalog package-server copy-content,REPLACES='$(OLM_REPLACES)' \
	hack/tools/gobuild.sh olm-$(cmd) $(OLM_VERSION) github.com/operator-framework/operator-lifecycle-manager \
	github.com/operator-framework/operator-lifecycle-manager/cmd/$(cmd) &&) true
	REPLACES='$(OLM_REPLACES)' hack/tools/gobuild.sh olm-cpb $(OLM_VERSION) github.com/operator-framework/operator-lifecycle-manager \
	github.com/operator-framework/operator-lifecycle-manager/util/cpb
	hack/tools/gobuild.sh opm $(OPM_VERSION) github.com/operator-framework/operator-registry github.com/operator-framework/operator-registry/cmd/opm -tags containers_image_openpgp
	hack/tools/gobuild.sh grpc_health_probe $(GRPC_HEALTH_PROBE_VERSION) github.com/grpc-ecosystem/grpc-health-probe github.com/grpc-ecosystem/grpc-health-probe

.PHONY: olm-v1-tools
olm-v1-tools: ## OLM v1's operator-controller and catalogd, and cert-manager's controller and cainjector, for OLM v1 on the local control plane.
	$(foreach cmd,operator-controller catalogd,\
	GONOSUMDB=github.com/operator-framework/operator-controller \
	LDFLAGS="-X github.com/operator-framework/operator-controller/internal/shared/version.version=v$(OPERATOR_CONTROLLER_VERSION)" \
	hack/tools/gobuild.sh $(cmd) $(OPERATOR_CONTROLLER_VERSION) github.com/operator-framework/operator-controller \
	github.com/operator-framework/operator-controller/cmd/$(cmd) -tags containers_image_openpgp &&) true
	$(foreach cmd,controller cainjector,hack/tools/gobuild.sh cert-manager-$(cmd) $(CERT_MANAGER_VERSION) \
	github.com/cert-manager/cert-manager github.com/cert-manager/cert-manager/cmd/$(cmd) &&) true

# KUDO v0.19's manager (kubectl kudo init --upgrade switches from it; make test-migration).
# vbom.ml, which it requires, is gone: its code lives on as github.com/fvbommel/util.
KUDO_V019_VERSION ?= 0.19.0
.PHONY: kudo-v0.19
kudo-v0.19:
	REPLACES="vbom.ml/util => github.com/fvbommel/util v0.0.0-20160121211510-db5cfe13f5cc" \
	hack/tools/gobuild.sh kudo-v0.19-manager $(KUDO_V019_VERSION) github.com/kudobuilder/kudo github.com/kudobuilder/kudo/cmd/manager

# kubectl-kuttl, the test harness `kubectl kudo test` runs, next to bin/kubectl-kudo.
.PHONY: kuttl
kuttl:
	GOTOOLCHAIN=$(KUTTL_GO_TOOLCHAIN) \
	LDFLAGS="-X github.com/kudobuilder/kuttl/pkg/version.gitVersion=v$(KUTTL_VERSION) -X github.com/kudobuilder/kuttl/pkg/version.gitCommit=v$(KUTTL_VERSION)" \
	hack/tools/gobuild.sh kubectl-kuttl $(KUTTL_VERSION) github.com/kudobuilder/kuttl github.com/kudobuilder/kuttl/cmd/kubectl-kuttl
