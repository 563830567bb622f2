# syntax=docker/dockerfile:1
#
# Turnline images (docs/deploy/node-docker.md):
#   docker build -t turnline .                    the API server (target "server", the default)
#   docker build -t turnline-runner --target runner .   the reference sandbox runner
#
# Both run the compiled build (npm run build → dist/node) on plain node as the unprivileged
# "node" user, with production dependencies only. The server binds 0.0.0.0, which it refuses to
# do without TURNLINE_API_KEYS: set keys (and S3_*, UPSTASH_* or REDIS_URL) when you run it.

ARG NODE_IMAGE=node:22.23.5-bookworm-slim

# ---- build: dev dependencies, then the compiled entries in dist/node
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the build needs no postinstall (esbuild's binary comes from its platform
# package); it keeps deno's and workerd's downloads out of the image build.
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY infra/build ./infra/build
COPY src ./src
COPY adapters ./adapters
COPY functions ./functions
RUN node infra/build/build.mjs node

# ---- production dependencies only
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# ---- the API server
FROM ${NODE_IMAGE} AS server
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    TURNLINE_DATA_DIR=/data \
    TURNLINE_RUNNER_ROOT=/workspaces \
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /src/dist/node ./dist/node
COPY package.json ./
# The embedded filesystem store (used only when S3_BUCKET is unset) lives in a volume. The
# embedded runner's workspaces would be a tree apart (/workspaces), but this image has no
# bubblewrap: with keys it refuses to run commands itself, so set TURNLINE_RUNNER_URL to the
# runner image.
RUN mkdir -p /data /workspaces && chown node:node /data /workspaces
VOLUME ["/data"]
USER node
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node as PID 1 gets SIGTERM directly: the server closes its listener and gives streams 5 s.
CMD ["node", "--enable-source-maps", "dist/node/server.mjs"]

# ---- the reference sandbox runner, in its own container (and no secrets but
# TURNLINE_RUNNER_SECRET). Every command runs in a bubblewrap sandbox inside it (its own PID,
# mount and network namespaces, an allow-listed environment: docs/configuration.md). bubblewrap
# needs unprivileged user namespaces, which Docker's default seccomp profile refuses: see the
# runner service in docker-compose.yml. TURNLINE_SANDBOX=require makes a runner that cannot
# sandbox refuse to start instead of running commands beside its own secret.
FROM ${NODE_IMAGE} AS runner
# git for worktree isolation, bubblewrap for the command sandbox, socat for the network relay
# of commands allowed the network (through the runner's egress proxy); sh, script (bsdutils),
# prlimit and setpriv (util-linux) are already in the base image.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates bubblewrap socat \
    && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    TURNLINE_RUNNER_ROOT=/workspaces \
    TURNLINE_RUNNER_HOST=0.0.0.0 \
    TURNLINE_RUNNER_PORT=8788 \
    TURNLINE_SANDBOX=require
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /src/dist/node ./dist/node
COPY package.json ./
RUN mkdir -p /workspaces && chown node:node /workspaces
VOLUME ["/workspaces"]
USER node
EXPOSE 8788
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TURNLINE_RUNNER_PORT||8788)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/node/runner.mjs"]

# The default target: the API server.
FROM server
