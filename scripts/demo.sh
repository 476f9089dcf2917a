#!/usr/bin/env bash
# Interim demo: builds what is missing, brings up the local control plane and the CSI mock driver,
# and says how to reach them. The resizer itself joins the demo once its command line exists;
# this script will then start it against the cluster and grow a volume.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/cluster.sh up
# shellcheck disable=SC1091
. .cluster/env

cat <<EOF

The local control plane is up (loopback only):
  API server          $API_URL
  admin kubeconfig    $ADMIN_KUBECONFIG
  resizer kubeconfig  $RESIZER_KUBECONFIG   (user csi-resizer, bound by deploy/kubernetes/rbac.yaml)
  CSI driver          $CSI_ADDRESS   ($DRIVER_NAME)
  logs                $APISERVER_LOG
                      $ETCD_LOG
                      $DRIVER_LOG

Try it with the TypeScript client from the repository root, e.g.:
  node --input-type=module -e "import * as k8s from '@kubernetes/client-node';
    const kc = new k8s.KubeConfig(); kc.loadFromFile('$ADMIN_KUBECONFIG');
    console.log((await kc.makeApiClient(k8s.CoreV1Api).listNamespace()).items.map(n => n.metadata.name));"

The resizer itself is not part of this demo yet: it arrives with its command line, and then
npm run demo will start it against this cluster and grow a volume end to end.

Stop everything with:  npm run cluster:down
EOF
