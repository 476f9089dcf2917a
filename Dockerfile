# csi-resizer: the TypeScript external-resizer sidecar, for people with a Docker engine.
#   docker build -t csi-resizer:0.1.0 .
# `npm run image` (scripts/image.sh) builds the image the project tests, without Docker and
# without a base image: a minimal root filesystem with the same Node.js version.
# Three stages: compile with the dev dependencies, install production dependencies only, then a
# runtime image that holds node, those dependencies, package.json and dist/ — nothing that writes
# at run time, so it runs with readOnlyRootFilesystem and as a non-root user.
# The Node.js version pinned in scripts/node-runtime.pins (the first line: the shipped LTS).
ARG NODE_VERSION=26.12.1
ARG NODE_IMAGE=node:${NODE_VERSION}-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.sh scripts/build.sh
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /src/dist ./dist
# The image's unprivileged "node" user (uid 1000); Kubernetes can enforce it with runAsNonRoot.
USER 1000:1000
ENTRYPOINT ["node", "dist/main.js"]
