# csi-resizer: the TypeScript external-resizer sidecar.
#   docker build -t csi-resizer:0.1.0 .
# Three stages: compile with the dev dependencies, install production dependencies only, then a
# runtime image that holds node, those dependencies, package.json and dist/ — nothing that writes
# at run time, so it runs with readOnlyRootFilesystem and as a non-root user.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.sh scripts/dist-main.js scripts/
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
