# Capstan's image for those who build with Docker; `make image` builds the
# same image without a Docker daemon. Every component is the one capstan
# binary, which Argo CD's command names (argocd-server, argocd-repo-server,
# argocd-application-controller, argocd-dex, argocd-k8s-auth, argocd, …) are
# linked to, and Dex.
#   docker build -t capstan .
FROM golang:1.26-bookworm AS build
# go.mod names Go 1.27; the go command fetches it from the module proxy.
ENV GOTOOLCHAIN=go1.27.3
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/capstan ./cmd/capstan
# Dex, which argocd-dex rundex runs; tools/dex pins its version.
RUN cd tools/dex && go build -trimpath -ldflags='-s -w' -o /out/ tool

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git git-lfs openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 999 argocd \
 && useradd --uid 999 --gid 999 --home-dir /home/argocd --create-home --shell /usr/sbin/nologin argocd
COPY --from=build /out/capstan /out/dex /usr/local/bin/
RUN for name in argocd argocd-server argocd-repo-server argocd-application-controller argocd-dex \
      argocd-applicationset-controller argocd-notifications argocd-image-updater argocd-k8s-auth; do \
      ln -s capstan /usr/local/bin/$name; done
USER 999:999
WORKDIR /home/argocd
ENV HOME=/home/argocd
CMD ["capstan"]
