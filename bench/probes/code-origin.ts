// The package a profiled function's source file belongs to, for the two profile summaries
// (cpu-profile-summary.ts, perf-summary.ts): one of our src/ folders, a dependency, a node: module,
// or the origin as given (V8's own entries).
export function packageOf(origin: string): string {
  const ours = /^src\/([^/]+)\//.exec(origin);
  if (ours) return `ours: ${ours[1]}`;
  const dep = /node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(origin);
  if (dep) return dep[1]!;
  if (origin.startsWith('node:')) return origin.split('/').slice(0, 2).join('/');
  return origin;
}
