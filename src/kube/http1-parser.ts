// The response side of our HTTP/1.1 client (http1-transport.ts says why we have one): a push
// parser for one response at a time, fed the socket's chunks as they come, split anywhere. It reads
// the status line, the headers the client acts on (Content-Length, Transfer-Encoding, Connection),
// and a body delimited by Content-Length, by chunked coding (extensions and trailers read and
// dropped) or by the end of the connection. Anything else malformed is an Http1ProtocolError.
// In streaming mode (a watch) the head goes to the sink as soon as it is read and the body's bytes
// as they arrive, decoded from chunked coding but never buffered: a watch's body has no end in sight.
// We never send Accept-Encoding, so bodies arrive uncoded.

/** The head is limited as node's HTTP parser limits it by default (--max-http-header-size). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** A body larger than this could not become one string (V8's limit is about 2^29 characters). */
export const MAX_BODY_BYTES = 512 * 1024 * 1024;
const MAX_CHUNK_LINE_BYTES = 4 * 1024;

export class Http1ProtocolError extends Error {
  constructor(message: string) {
    super(`malformed HTTP response: ${message}`);
    this.name = 'Http1ProtocolError';
  }
}

export interface Http1Response {
  status: number;
  body: Buffer;
  /** The server keeps the connection open for the next request. */
  keepAlive: boolean;
}

/** Receives a streamed response: its head once, then its body's bytes in order. */
export interface Http1BodySink {
  /** The final head (interim 1xx answers are skipped). */
  onHead(status: number, keepAlive: boolean): void;
  /** Body bytes (a view of the socket's chunk: use or copy before returning). Never empty. */
  onBody(chunk: Buffer): void;
}

const CRLF = Buffer.from('\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/;

const enum State {
  Head,
  /** Content-Length body: `remaining` bytes to go. */
  Fixed,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  /** The body ends when the connection does. */
  UntilClose,
  Done,
}

/** Parses one response; make a new parser for the next request. */
export class Http1ResponseParser {
  private state = State.Head;
  private pending: Buffer | undefined;
  private status = 0;
  private keepAlive = true;
  private remaining = 0;
  private bodyBytes = 0;
  private readonly chunks: Buffer[] = [];
  /** Whether any byte of a response arrived (a reused socket that closes before it is stale). */
  received = false;

  /**
   * `noBody`: the request was a HEAD (a response to it carries no body whatever its headers say).
   * `sink`: streaming mode; the body goes to it, and the response returned at the end has an empty body.
   */
  constructor(private readonly noBody = false, private readonly sink?: Http1BodySink) {}

  /**
   * Feeds bytes. Returns the response once it is complete, else undefined. Bytes after a complete
   * response are a protocol error (we never pipeline). In streaming mode the sink is called from here.
   */
  push(data: Buffer): Http1Response | undefined {
    if (data.length === 0) return undefined;
    this.received = true;
    if (this.state === State.Done) throw new Http1ProtocolError('bytes after the end of the response');
    let buf = this.pending === undefined ? data : Buffer.concat([this.pending, data]);
    this.pending = undefined;
    for (;;) {
      switch (this.state) {
        case State.Head: {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) {
            if (buf.length > MAX_HEAD_BYTES) throw new Http1ProtocolError(`head larger than ${MAX_HEAD_BYTES} bytes`);
            this.pending = buf;
            return undefined;
          }
          if (end + 4 > MAX_HEAD_BYTES) throw new Http1ProtocolError(`head larger than ${MAX_HEAD_BYTES} bytes`);
          this.readHead(buf.toString('latin1', 0, end));
          buf = buf.subarray(end + 4);
          break;
        }
        case State.Fixed: {
          const take = Math.min(this.remaining, buf.length);
          if (take > 0) this.body(buf.subarray(0, take));
          this.remaining -= take;
          buf = buf.subarray(take);
          if (this.remaining === 0) this.state = State.Done;
          else return undefined;
          break;
        }
        case State.ChunkSize: {
          const line = this.line(buf, MAX_CHUNK_LINE_BYTES, 'chunk size line');
          if (line === undefined) return undefined;
          buf = buf.subarray(line.length + 2);
          const match = CHUNK_SIZE.exec(line);
          if (!match) throw new Http1ProtocolError(`bad chunk size line ${quote(line)}`);
          const size = parseInt(match[1]!, 16);
          if (size === 0) {
            this.state = State.Trailers;
          } else {
            this.addBodyBytes(size);
            this.remaining = size;
            this.state = State.ChunkData;
          }
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, buf.length);
          if (take > 0) this.body(buf.subarray(0, take));
          this.remaining -= take;
          buf = buf.subarray(take);
          if (this.remaining > 0) return undefined;
          this.state = State.ChunkDataEnd;
          break;
        }
        case State.ChunkDataEnd: {
          if (buf.length < 2) {
            if (buf.length === 1 && buf[0] !== 0x0d) throw new Http1ProtocolError('chunk data not followed by CRLF');
            this.pending = buf.length > 0 ? buf : undefined;
            return undefined;
          }
          if (buf[0] !== 0x0d || buf[1] !== 0x0a) throw new Http1ProtocolError('chunk data not followed by CRLF');
          buf = buf.subarray(2);
          this.state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          const line = this.line(buf, MAX_HEAD_BYTES, 'trailer');
          if (line === undefined) return undefined;
          buf = buf.subarray(line.length + 2);
          if (line === '') this.state = State.Done;
          else if (line.indexOf(':') <= 0) throw new Http1ProtocolError(`bad trailer line ${quote(line)}`);
          break;
        }
        case State.UntilClose: {
          this.addBodyBytes(buf.length);
          if (buf.length > 0) this.body(buf);
          return undefined;
        }
        case State.Done: {
          if (buf.length > 0) throw new Http1ProtocolError('bytes after the end of the response');
          return this.response();
        }
      }
      if (buf.length === 0 && this.state !== State.Done) return undefined;
    }
  }

  /** The connection ended: the response if its body was delimited by the end, else an error. */
  end(): Http1Response {
    if (this.state === State.UntilClose || this.state === State.Done) {
      this.state = State.Done;
      return this.response();
    }
    throw new Http1ProtocolError(this.state === State.Head ? 'connection closed before the response head ended' : 'connection closed before the response body ended');
  }

  private body(bytes: Buffer): void {
    if (this.sink === undefined) this.chunks.push(bytes);
    else this.sink.onBody(bytes);
  }

  private response(): Http1Response {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return { status: this.status, body, keepAlive: this.keepAlive };
  }

  /** One CRLF-terminated line at the start of buf (without its CRLF), or undefined when incomplete. */
  private line(buf: Buffer, limit: number, what: string): string | undefined {
    const end = buf.indexOf(CRLF);
    if (end < 0) {
      if (buf.length > limit) throw new Http1ProtocolError(`${what} longer than ${limit} bytes`);
      this.pending = buf.length > 0 ? buf : undefined;
      return undefined;
    }
    if (end > limit) throw new Http1ProtocolError(`${what} longer than ${limit} bytes`);
    return buf.toString('latin1', 0, end);
  }

  private addBodyBytes(n: number): void {
    if (this.sink !== undefined) return; // streamed: nothing is held
    this.bodyBytes += n;
    if (this.bodyBytes > MAX_BODY_BYTES) throw new Http1ProtocolError(`body larger than ${MAX_BODY_BYTES} bytes`);
  }

  private readHead(head: string): void {
    let lineEnd = head.indexOf('\r\n');
    if (lineEnd < 0) lineEnd = head.length;
    const statusLine = head.slice(0, lineEnd);
    const match = STATUS_LINE.exec(statusLine);
    if (!match) throw new Http1ProtocolError(`bad status line ${quote(statusLine)}`);
    const status = Number(match[2]);
    let keepAlive = match[1] === '1';
    let contentLength: number | undefined;
    let chunked = false;
    let otherCoding = false;
    let start = lineEnd + 2;
    while (start < head.length) {
      let end = head.indexOf('\r\n', start);
      if (end < 0) end = head.length;
      const colon = head.indexOf(':', start);
      if (colon < 0 || colon > end) throw new Http1ProtocolError(`header line without a colon ${quote(head.slice(start, end))}`);
      const name = head.slice(start, colon);
      if (!TOKEN.test(name)) throw new Http1ProtocolError(`bad header name ${quote(name)}`);
      const value = head.slice(colon + 1, end).trim();
      if (/[\r\n\0]/.test(value)) throw new Http1ProtocolError(`bad header value for ${name}`);
      switch (name.length) {
        case 10: // Connection
          if (name.toLowerCase() === 'connection') {
            const tokens = value.toLowerCase().split(',').map((t) => t.trim());
            if (tokens.includes('close')) keepAlive = false;
            else if (tokens.includes('keep-alive')) keepAlive = true;
          }
          break;
        case 14: // Content-Length
          if (name.toLowerCase() === 'content-length') {
            if (!/^\d{1,15}$/.test(value)) throw new Http1ProtocolError(`bad Content-Length ${quote(value)}`);
            const length = Number(value);
            if (contentLength !== undefined && contentLength !== length) throw new Http1ProtocolError('conflicting Content-Length headers');
            contentLength = length;
          }
          break;
        case 17: // Transfer-Encoding
          if (name.toLowerCase() === 'transfer-encoding') {
            const codings = value.toLowerCase().split(',').map((t) => t.trim()).filter((t) => t !== '');
            // chunked must be the last coding; any other coding (we asked for none) is refused below.
            chunked = codings.at(-1) === 'chunked';
            otherCoding = codings.some((t) => t !== 'chunked');
          }
          break;
      }
      start = end + 2;
    }
    this.status = status;
    this.keepAlive = keepAlive;
    if (status >= 100 && status <= 199) {
      // An interim answer (100 Continue, 103 Early Hints): the real one follows. 101 would switch
      // protocols, which we never ask for.
      if (status === 101) throw new Http1ProtocolError('unexpected 101 Switching Protocols');
      this.state = State.Head;
      return;
    }
    if (otherCoding) throw new Http1ProtocolError('unsupported Transfer-Encoding (none was requested)');
    if (this.noBody || status === 204 || status === 304) {
      this.state = State.Done;
    } else if (chunked) {
      if (contentLength !== undefined) throw new Http1ProtocolError('both Content-Length and chunked Transfer-Encoding');
      this.state = State.ChunkSize;
    } else if (contentLength !== undefined) {
      this.addBodyBytes(contentLength);
      this.remaining = contentLength;
      this.state = contentLength === 0 ? State.Done : State.Fixed;
    } else {
      this.keepAlive = false;
      this.state = State.UntilClose;
    }
    this.sink?.onHead(status, this.keepAlive);
  }
}

/** A short, printable excerpt of what the server sent, for an error message. */
function quote(text: string): string {
  const cut = text.length > 64 ? `${text.slice(0, 64)}…` : text;
  return JSON.stringify(cut);
}
