# syntax=docker/dockerfile:1
# aviso-ts container image (operations.md §5.2).
#   docker build --target release -t aviso-ts .
#   docker build --target debug   -t aviso-ts:debug .
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install everything, compile TypeScript ------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
# The operator console (docs/console.md), compiled by build:server into dist/console/.
COPY console ./console
# The server alone: the client workspace (packages/) is not part of the image.
RUN npm run build:server

# ---- production dependencies only ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- release: compiled code, production dependencies, non-root ---------------------------------
FROM ${NODE_IMAGE} AS release
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="aviso-ts" \
      org.opencontainers.image.description="Notification server speaking the aviso-server wire protocol" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/ecmwf/aviso-server"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /deps/node_modules ./node_modules
COPY --from=build /build/dist ./dist
COPY package.json ./
COPY static ./static
# The default configuration; mount another file here, at /etc/aviso_server/config.yaml, or point
# AVISOSERVER_CONFIG_FILE at one. AVISOSERVER_* variables override single values.
COPY config/config.yaml ./config/config.yaml
# Inside a container the API must listen beyond loopback.
ENV AVISOSERVER_APPLICATION__HOST=0.0.0.0
# The in-memory backend's sequence journal (notification_backend.in_memory.state_directory,
# ./state from /app, D40): a volume, so it is writable with a read-only root filesystem
# (`docker run --read-only`) and outlives a restart of the container.
RUN mkdir -p /app/state && chown node:node /app/state
VOLUME ["/app/state"]
USER node
EXPOSE 8000 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AVISOSERVER_APPLICATION__PORT||8000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM from `docker stop` for the graceful shutdown.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/src/main.js"]

# ---- debug: the same application on an image with a shell, running as root ---------------------
FROM release AS debug
USER root
RUN apt-get update && apt-get install -y --no-install-recommends bash ca-certificates curl procps \
    && rm -rf /var/lib/apt/lists/*
