// The auto-grow scenario's nodes: one kubelet stand-in (test/fakes/fake-kubelet.ts, real
// TokenReview and SubjectAccessReview on every request) per node on loopback, all serving one
// certificate for 127.0.0.1 so the resizer trusts them through one CA file, as a cluster's
// kubelets share their serving CA; and the Node objects that point at them (InternalIP
// 127.0.0.1, the stand-in's port). Each stand-in serves its node's pods: the claims' pods, and
// pods without claims.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeKubelet, type FakeVolume } from '../../test/fakes/fake-kubelet.js';
import { selfSigned } from '../../test/support/self-signed.js';
import { pool, type Api } from './api.js';
import { LABEL } from './workload.js';

export interface FleetNode {
  name: string;
  volumes: FakeVolume[];
}

export class KubeletFleet {
  private constructor(
    private readonly kubelets: Map<string, FakeKubelet>,
    private readonly volumes: Map<string, FakeVolume[]>,
    /** The CA file of the stand-ins' serving certificate, for --kubelet-certificate-authority. */
    readonly caPath: string,
  ) {}

  /** Starts one stand-in per node, `concurrency` at a time; on a failure the ones started are closed. */
  static async start(o: {
    nodes: readonly FleetNode[];
    fillerPods: number;
    reviewerKubeconfigPath: string;
    dir: string;
    concurrency: number;
  }): Promise<KubeletFleet> {
    const tls = selfSigned('IP:127.0.0.1');
    const caPath = join(o.dir, 'kubelet-ca.crt');
    writeFileSync(caPath, tls.cert);
    const kubelets = new Map<string, FakeKubelet>();
    const volumes = new Map<string, FakeVolume[]>();
    const fleet = new KubeletFleet(kubelets, volumes, caPath);
    try {
      await pool(o.nodes, o.concurrency, async (n) => {
        const k = await FakeKubelet.start({
          nodeName: n.name,
          reviewerKubeconfigPath: o.reviewerKubeconfigPath,
          tls,
          volumes: n.volumes,
          fillerPods: o.fillerPods,
        });
        kubelets.set(n.name, k);
        volumes.set(n.name, [...n.volumes]);
      });
    } catch (err) {
      await fleet.close();
      throw err;
    }
    return fleet;
  }

  get size(): number {
    return this.kubelets.size;
  }

  /** Registers a Node per stand-in, as its kubelet would: InternalIP 127.0.0.1 and the kubelet port. */
  async registerNodes(api: Api, concurrency: number): Promise<void> {
    await pool([...this.kubelets.values()], concurrency, async (k) => {
      await api.callRetry('POST', '/api/v1/nodes', { metadata: { name: k.nodeName, labels: { 'kubernetes.io/hostname': k.nodeName, [LABEL]: 'autogrow' } } });
      await api.mergePatch(`/api/v1/nodes/${k.nodeName}/status`, {
        status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: k.port } } },
      });
    });
  }

  async deleteNodes(api: Api, concurrency: number): Promise<void> {
    await pool([...this.kubelets.keys()], concurrency, async (name) => {
      await api.callRetry('DELETE', `/api/v1/nodes/${name}`).catch(() => undefined);
    });
  }

  /** Sets the free bytes of one claim's volume on its node, from the next summary on. */
  setAvailable(node: string, claim: string, availableBytes: bigint): void {
    const k = this.kubelets.get(node);
    const list = this.volumes.get(node);
    if (!k || !list) throw new Error(`no kubelet stand-in for node ${node}`);
    const i = list.findIndex((v) => v.claim === claim);
    if (i < 0) throw new Error(`node ${node} serves no volume of claim ${claim}`);
    list[i] = { ...list[i]!, availableBytes };
    k.setVolumes([...list]);
  }

  /** Each stand-in's port, by node name. */
  ports(): Map<string, number> {
    return new Map([...this.kubelets].map(([name, k]) => [name, k.port]));
  }

  /** Requests answered so far, per node. */
  requestsPerNode(): Map<string, number> {
    return new Map([...this.kubelets].map(([name, k]) => [name, k.requests.length]));
  }

  /** Requests answered with anything but 200, over every node (a refused or failed read). */
  failedRequests(): number {
    let n = 0;
    for (const k of this.kubelets.values()) n += k.requests.filter((r) => r.status !== 200).length;
    return n;
  }

  /** Arrival times (ms since the epoch) of the requests a node's stand-in answered. */
  requestTimes(node: string): number[] {
    return (this.kubelets.get(node)?.requests ?? []).map((r) => r.receivedAtMs);
  }

  async close(): Promise<void> {
    await Promise.all([...this.kubelets.values()].map((k) => k.close().catch(() => undefined)));
    this.kubelets.clear();
  }
}
