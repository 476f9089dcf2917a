# csi-resizer: the TypeScript external-resizer sidecar, for people with a Docker engine.
#   docker build --build-arg SOURCE_COMMIT=$(git rev-parse HEAD) -t csi-resizer:0.1.0 .
# `npm run image` (scripts/image.sh) builds the image the project tests, without Docker and
# without a base image: a minimal root filesystem with the same Node.js binary.
#
# Four stages: compile with the dev dependencies; install production dependencies only; fetch the
# pinned Node.js binary from the npm registry and check its sha512 against scripts/node-runtime.pins;
# then a runtime image that holds that node, package.json, dist/ (one bundle with the production
# dependencies in it) and those dependencies' license files —
# nothing that writes at run time, so it runs with readOnlyRootFilesystem and as a non-root user.
# The base is the slim image of the same major (its floating tag always exists); its own node is
# replaced by the pinned one, so Docker users run exactly the version the tests ran.
# NODE_VERSION is the first line of scripts/node-runtime.pins (the shipped LTS).
ARG NODE_VERSION=26.12.1
ARG NODE_IMAGE=node:26-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.sh scripts/compile-cache.sh scripts/dist-main.js scripts/bundle-builtins.mjs scripts/bundle-ascii.mjs scripts/gen-log-lines.ts scripts/
COPY src ./src
# .git is not in the build context: the commit --version prints comes in as a build argument.
ARG SOURCE_COMMIT=
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/collect-licenses.mjs ./
# The bundle holds the production dependencies; only their license files are shipped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && node collect-licenses.mjs . licenses

FROM ${NODE_IMAGE} AS runtime
ARG NODE_VERSION
ARG TARGETARCH
WORKDIR /runtime
COPY scripts/node-runtime.pins ./
RUN set -eu; \
    arch=x64; if [ "${TARGETARCH:-amd64}" = arm64 ]; then arch=arm64; fi; \
    want=$(awk -v v="$NODE_VERSION" -v a="$arch" '!/^#/ && $2 == v && $3 == a { print $4 }' node-runtime.pins); \
    [ -n "$want" ] || { echo "no pin for Node.js $NODE_VERSION $arch in scripts/node-runtime.pins" >&2; exit 1; }; \
    npm pack "node-linux-$arch@$NODE_VERSION" --silent >/dev/null; \
    got=$(node -e 'const h=require("crypto").createHash("sha512");h.update(require("fs").readFileSync(process.argv[1]));console.log("sha512-"+h.digest("base64"))' "node-linux-$arch-$NODE_VERSION.tgz"); \
    [ "$got" = "$want" ] || { echo "node-linux-$arch@$NODE_VERSION: sha512 $got, pinned $want" >&2; exit 1; }; \
    tar -xzf "node-linux-$arch-$NODE_VERSION.tgz" --strip-components=2 package/bin/node; \
    ./node --version

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
COPY --from=runtime /runtime/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps /app/licenses ./licenses
COPY package.json ./
COPY --from=build /src/dist ./dist
# Root by default, as upstream's image: a CSI driver's socket is usually root's with mode 0755, and
# a drop-in must be able to open it. Our manifests run the pod as uid 1000 (runAsNonRoot) instead.
USER 0:0
# scripts/node-flags.ts: NODE_FLAGS.
ENTRYPOINT ["node", "--max-semi-space-size=2", "dist/main.js"]
