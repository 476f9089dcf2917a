# Sourced by npm run e2e, npm run e2e:smoke and npm test: builds (or finds in the cache) the node's
# components and images, once per version, and exports where they are for e2e/node.sh.
E2E_COMPONENTS_ENV=$(bash e2e/build.sh | tail -n1)
E2E_IMAGES_DIR=$(bash e2e/images.sh | tail -n1)
export E2E_COMPONENTS_ENV E2E_IMAGES_DIR
