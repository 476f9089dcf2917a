// Test-only gRPC access to a CSI driver through the official csi.proto (loaded with proto-loader),
// used by the harness to probe the mock driver and to create volumes for fixtures. The product has
// its own proto under src/csi/proto; this deliberately does not share it.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: any) => void) => grpc.ClientUnaryCall;
type ServiceCtor = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ClientOptions) => grpc.Client & Record<string, Unary>;

interface CsiPackage {
  Identity: ServiceCtor;
  Controller: ServiceCtor;
  Node: ServiceCtor;
}

const loaded = new Map<string, CsiPackage>();

function csiPackage(protoPath: string): CsiPackage {
  let pkg = loaded.get(protoPath);
  if (!pkg) {
    const def = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const root = grpc.loadPackageDefinition(def) as unknown as { csi: { v1: CsiPackage } };
    pkg = root.csi.v1;
    loaded.set(protoPath, pkg);
  }
  return pkg;
}

/** unix:///abs/path for a socket path; an address that already has a scheme is returned as is. */
export function toAddress(socketOrAddress: string): string {
  return socketOrAddress.includes('://') || socketOrAddress.startsWith('unix:') ? socketOrAddress : `unix://${socketOrAddress}`;
}

export interface CsiTestClient {
  call<T = any>(service: 'Identity' | 'Controller' | 'Node', method: string, req: object, timeoutMs?: number): Promise<T>;
  close(): void;
}

export function csiTestClient(protoPath: string, address: string): CsiTestClient {
  const pkg = csiPackage(protoPath);
  const clients = new Map<string, grpc.Client & Record<string, Unary>>();
  const get = (service: 'Identity' | 'Controller' | 'Node') => {
    let c = clients.get(service);
    if (!c) {
      c = new pkg[service](toAddress(address), grpc.credentials.createInsecure());
      clients.set(service, c);
    }
    return c;
  };
  return {
    call(service, method, req, timeoutMs = 10_000) {
      const client = get(service);
      const fn = client[method];
      if (typeof fn !== 'function') return Promise.reject(new Error(`csi.v1.${service} has no method ${method}`));
      return new Promise((resolve, reject) => {
        fn.call(client, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (err) reject(new Error(`csi.v1.${service}/${method}: ${err.message}`, { cause: err }));
          else resolve(res);
        });
      });
    },
    close() {
      for (const c of clients.values()) c.close();
      clients.clear();
    },
  };
}

export async function getPluginInfo(protoPath: string, address: string, timeoutMs = 2000): Promise<{ name: string; vendor_version: string }> {
  const client = csiTestClient(protoPath, address);
  try {
    return await client.call('Identity', 'GetPluginInfo', {}, timeoutMs);
  } finally {
    client.close();
  }
}
