// Why the driver's socket cannot be dialled, in words an operator can act on. gRPC reports a
// failed dial only as a channel state; the usual causes beside a sidecar are a socket the driver has
// not created yet and one this process may not write to (a root driver's socket is mode 0755, so a
// sidecar running as another user is refused: docs/deployment.md, "The image user").
import { statSync, type Stats } from 'node:fs';

/** The identity the kernel checks a connect() against. */
export interface ProcessIdentity {
  uid: number;
  gids: readonly number[];
}

export function currentIdentity(): ProcessIdentity | undefined {
  if (typeof process.getuid !== 'function' || typeof process.getgroups !== 'function' || typeof process.getgid !== 'function') return undefined;
  return { uid: process.getuid(), gids: [process.getgid(), ...process.getgroups()] };
}

/**
 * What stops `identity` from connecting to the unix socket at `socketPath`, or undefined when
 * nothing visible does. Connecting needs write permission on the socket (root needs none).
 */
export function socketAccessProblem(
  socketPath: string,
  identity: ProcessIdentity | undefined = currentIdentity(),
  stat: (path: string) => Stats = statSync,
): string | undefined {
  let st: Stats;
  try {
    st = stat(socketPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${socketPath} does not exist (yet): is the driver running and writing its socket there?`;
    if (code === 'EACCES') return `${socketPath} cannot be looked up: permission denied on a directory above it`;
    return `${socketPath} cannot be read: ${(err as Error).message}`;
  }
  if (!st.isSocket()) return `${socketPath} is not a unix socket`;
  if (identity === undefined || identity.uid === 0) return undefined;
  const writable = st.uid === identity.uid ? st.mode & 0o200 : identity.gids.includes(st.gid) ? st.mode & 0o020 : st.mode & 0o002;
  if (writable) return undefined;
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  return (
    `permission denied: ${socketPath} is owned by uid ${st.uid} gid ${st.gid} with mode ${mode}, and this process runs as uid ${identity.uid}; ` +
    `run the container as the socket's owner (or as root, the image's default), or have the driver make the socket writable for this user`
  );
}
