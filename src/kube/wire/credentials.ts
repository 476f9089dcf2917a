// Turning a ClientConfig into what a request needs right now: headers and TLS material. Files
// (token, CA, client certificate) are read on every resolution, so rotated files are picked up, as
// client-go's cached file token source reads its file again; exec credential plugins run with
// KUBERNETES_EXEC_INFO and a client's CredentialSource keeps their answer, as client-go's exec
// authenticator does, until shortly before its expirationTimestamp (for good without one) or until
// the server refuses it.
// A CA file is rotated as client-go 1.36+ rotates it (ClientsAllowCARotation): a file that cannot
// be read, is empty or holds no certificate (a rotation caught half-way) leaves the CA last read
// from it in use (docs/architecture.md, "The API server's connections"). Plugin runs are reported
// as client-go's metrics count them, and how a CA file read went is returned for the client to
// count its reloads (docs/behavior.md §5.3, "REST client").
import { X509Certificate } from 'node:crypto';
import { readFile as readFileCallback } from 'node:fs';
import { promisify } from 'node:util';
import nodePath from 'node:path';
import { monotonicMs } from '../../base/clock.js';
import { CaReloadReason, ExecCallStatus, type CredentialEvents } from '../../observability/rest-client.js';
import type { ClientConfig, ExecCredentialPlugin, Material } from './kubeconfig.js';

// Not node:fs/promises: loading it pulls in readline and the REPL's history module, start-up CPU
// for two file reads (docs/performance.md, "Start-up costs behind code choices").
const readFile = promisify(readFileCallback);

export interface ResolvedCredentials {
  readonly headers: Readonly<Record<string, string>>;
  readonly tls: {
    readonly ca?: Buffer;
    readonly cert?: Buffer;
    readonly key?: Buffer;
    readonly rejectUnauthorized: boolean;
    readonly servername?: string;
  };
  /** When an exec plugin's credential expires (ms since the epoch); undefined when it doesn't say. */
  readonly expiresAtMs?: number;
  /** The client certificate an exec plugin returned (its first certificate's validity), when it returned one that parses. */
  readonly execCertificate?: ExecCertificate;
  /** How reading the CA file went (absent without a CA file). */
  readonly caFileRead?: CaFileRead;
}

/** A CA file read, or why it was not and the CA last read from it is in use (client-go's CA reload reasons). */
export type CaFileRead = 'read' | typeof CaReloadReason.ReadError | typeof CaReloadReason.Empty | typeof CaReloadReason.ParseError;

export interface ExecCertificate {
  readonly pem: Buffer;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

async function read(material: Material | undefined): Promise<Buffer | undefined> {
  if (!material) return undefined;
  return 'data' in material ? material.data : readFile(material.file);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Whether the PEM text holds a certificate that parses (as Go's AppendCertsFromPEM succeeds). */
function holdsCertificate(pem: Buffer): boolean {
  for (const block of pem.toString('latin1').match(PEM_CERTIFICATE) ?? []) {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      // not a certificate: try the next block
    }
  }
  return false;
}

/**
 * The CA last read from each CA file that held a certificate, by the config's Material: what stays
 * in use while the file is unreadable, empty or broken. Weak, so a config's entry goes with it.
 */
const lastGoodCa = new WeakMap<Material, Buffer>();

/**
 * The CA: inline data as it is; a file read again, falling back to the last good read of it. The
 * first read has nothing to fall back to, so a bad file then is an error (client-go cannot build
 * its transport either).
 */
async function readCa(material: Material | undefined): Promise<{ ca: Buffer | undefined; read?: CaFileRead }> {
  if (!material || 'data' in material) return { ca: material?.data };
  const previous = lastGoodCa.get(material);
  let pem: Buffer;
  try {
    pem = await readFile(material.file);
  } catch (err) {
    if (previous) return { ca: previous, read: CaReloadReason.ReadError };
    throw err;
  }
  if (holdsCertificate(pem)) {
    lastGoodCa.set(material, pem);
    return { ca: pem, read: 'read' };
  }
  if (previous) return { ca: previous, read: pem.length === 0 ? CaReloadReason.Empty : CaReloadReason.ParseError };
  throw new Error(`certificate authority file ${material.file} holds no PEM certificate`);
}

interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

const EXEC_TIMEOUT_MS = 30_000;

export async function runExecPlugin(plugin: ExecCredentialPlugin, signal: AbortSignal, events?: CredentialEvents): Promise<ExecCredentialStatus> {
  const command = plugin.command.includes('/') ? nodePath.resolve(plugin.dir, plugin.command) : plugin.command;
  const info = JSON.stringify({ apiVersion: plugin.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  // node:child_process only when a plugin runs (it would cost every start-up otherwise).
  const { execFile } = process.getBuiltinModule('node:child_process');
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      command,
      [...plugin.args],
      { env: { ...process.env, ...plugin.env, KUBERNETES_EXEC_INFO: info }, timeout: EXEC_TIMEOUT_MS, signal, maxBuffer: 1 << 20 },
      (err, out) => {
        if (events) events.execPluginCall(...execCallOutcome(err));
        if (err) reject(new Error(`exec credential plugin ${plugin.command} failed: ${err.message}`, { cause: err }));
        else resolve(out);
      },
    );
  });
  let parsed: { status?: ExecCredentialStatus };
  try {
    parsed = JSON.parse(stdout) as { status?: ExecCredentialStatus };
  } catch (err) {
    throw new Error(`exec credential plugin ${plugin.command} printed no ExecCredential JSON`, { cause: err });
  }
  const status = parsed.status ?? {};
  if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
    throw new Error(`exec credential plugin ${plugin.command} returned neither a token nor a client certificate`);
  }
  return status;
}

/**
 * How a plugin's run ended, in client-go's terms (the exit code, and the call_status its metric
 * gives it): a non-zero exit, or death by a signal (our timeout's; Go reports exit code -1), is
 * the plugin's failure; a command that could not be started was not found; anything else (our
 * caller's abort, an answer over the size limit) is the client's.
 */
function execCallOutcome(err: (Error & { code?: unknown; signal?: unknown; syscall?: unknown }) | null): [exitCode: number, status: ExecCallStatus] {
  if (err === null) return [0, ExecCallStatus.NoError];
  if (typeof err.code === 'number') return [err.code, ExecCallStatus.PluginExecutionError];
  if (err.name === 'AbortError') return [1, ExecCallStatus.ClientInternalError];
  if (typeof err.signal === 'string') return [-1, ExecCallStatus.PluginExecutionError];
  if (typeof err.syscall === 'string' && err.syscall.startsWith('spawn')) return [1, ExecCallStatus.PluginNotFoundError];
  return [1, ExecCallStatus.ClientInternalError];
}

/** The validity of the first certificate of an exec plugin's PEM, or undefined when it does not parse. */
function execCertificate(pem: Buffer): ExecCertificate | undefined {
  try {
    const leaf = new X509Certificate(pem);
    return { pem, notBeforeMs: leaf.validFromDate.getTime(), notAfterMs: leaf.validToDate.getTime() };
  } catch {
    return undefined;
  }
}

/** An exec plugin runs again this long before the expirationTimestamp of the credential it gave. */
export const EXEC_REFRESH_MARGIN_MS = 10_000;

/**
 * One client's credentials over time. Every `resolve` reads the files again; an exec plugin's
 * answer is kept until EXEC_REFRESH_MARGIN_MS before its expirationTimestamp, for good without
 * one, and the plugin runs again sooner only when the server refused its credential (401).
 * `events`: where plugin runs are reported (an API client's metrics), if anywhere.
 */
export class CredentialSource {
  /** The plugin's last answer and the monotonicMs() from which it is run again (undefined: never by time). */
  private exec: { status: ExecCredentialStatus; refreshAtMs: number | undefined } | undefined;

  constructor(
    private readonly config: ClientConfig,
    private readonly events?: CredentialEvents,
  ) {}

  /** `refused`: the server answered 401 to the credential in use, so an exec plugin runs again. */
  async resolve(signal: AbortSignal, refused = false): Promise<ResolvedCredentials> {
    const { config } = this;
    const headers: Record<string, string> = {};
    let cert = await read(config.clientCert);
    let key = await read(config.clientKey);
    let expiresAtMs: number | undefined;
    let fromPlugin: ExecCertificate | undefined;
    const auth = config.auth;
    switch (auth.kind) {
      case 'none':
        break;
      case 'token':
        headers['Authorization'] = `Bearer ${auth.token}`;
        break;
      case 'tokenFile':
        headers['Authorization'] = `Bearer ${(await readFile(auth.path, 'utf8')).trim()}`;
        break;
      case 'basic':
        headers['Authorization'] = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
        break;
      case 'exec': {
        const status = await this.execStatus(auth.plugin, signal, refused);
        if (status.token) headers['Authorization'] = `Bearer ${status.token}`;
        if (status.clientCertificateData && status.clientKeyData) {
          cert = Buffer.from(status.clientCertificateData);
          key = Buffer.from(status.clientKeyData);
          fromPlugin = execCertificate(cert);
        }
        if (status.expirationTimestamp) expiresAtMs = Date.parse(status.expirationTimestamp);
        break;
      }
      default: {
        const unknown: never = auth;
        throw new Error(`unknown auth ${JSON.stringify(unknown)}`);
      }
    }
    const { ca, read: caFileRead } = await readCa(config.ca);
    return {
      headers,
      tls: {
        ...(ca ? { ca } : {}),
        ...(cert ? { cert } : {}),
        ...(key ? { key } : {}),
        rejectUnauthorized: !config.insecureSkipTlsVerify,
        ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
      },
      ...(expiresAtMs !== undefined && !Number.isNaN(expiresAtMs) ? { expiresAtMs } : {}),
      ...(fromPlugin ? { execCertificate: fromPlugin } : {}),
      ...(caFileRead ? { caFileRead } : {}),
    };
  }

  /** The plugin's kept answer while it is fresh and was not refused, else a new run's. */
  private async execStatus(plugin: ExecCredentialPlugin, signal: AbortSignal, refused: boolean): Promise<ExecCredentialStatus> {
    const kept = this.exec;
    if (kept !== undefined && !refused && (kept.refreshAtMs === undefined || monotonicMs() < kept.refreshAtMs)) return kept.status;
    const status = await runExecPlugin(plugin, signal, this.events);
    const expiresAtMs = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Number.NaN;
    // Counted on the monotonic clock from now: a step of the wall clock neither keeps it nor drops it early.
    const refreshAtMs = Number.isNaN(expiresAtMs) ? undefined : monotonicMs() + (expiresAtMs - Date.now()) - EXEC_REFRESH_MARGIN_MS;
    this.exec = { status, refreshAtMs };
    return status;
  }
}

/** Credentials resolved once, with nothing kept: an exec plugin runs every time. */
export function resolveCredentials(config: ClientConfig, signal: AbortSignal, events?: CredentialEvents): Promise<ResolvedCredentials> {
  return new CredentialSource(config, events).resolve(signal);
}
