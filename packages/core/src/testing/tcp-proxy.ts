/**
 * A TCP proxy for fault injection between a client and ZooKeeper (`tc netem` is not available
 * here). Modes: `forward` (default), `blackhole` (connections stay open, nothing is forwarded in
 * either direction, new connections are accepted and starved), and `reset()` (destroys every open
 * connection). `delayMs` adds latency to every forwarded chunk.
 */
import { createServer, Socket, type Server } from 'node:net';

/** Options of {@link createTcpProxy}. */
export interface TcpProxyOptions {
  /** Where to forward to. */
  targetHost?: string;
  targetPort: number;
  /** Port to listen on (127.0.0.1); 0 (default) picks a free one. */
  listenPort?: number;
}

/** A running proxy. */
export interface TcpProxy {
  /** `127.0.0.1:port` to give to the client. */
  readonly connectString: string;
  readonly port: number;
  /** Stops forwarding without closing anything. */
  blackhole(): void;
  /** Forwards again; bytes held during the black hole are dropped. */
  forward(): void;
  /** Adds `ms` of latency to each forwarded chunk (0 for none). */
  setDelay(ms: number): void;
  /**
   * Cuts what the server sends into pieces of at most `bytes`, one every `intervalMs` (a slow,
   * fragmenting link: the client sees a large reply arrive in many reads). `undefined` turns it off.
   */
  setFragments(fragments: { bytes: number; intervalMs: number } | undefined): void;
  /** Destroys every open connection (the client sees a reset). */
  reset(): void;
  /** Number of open client connections. */
  readonly connections: number;
  /** Closes the proxy and every connection. Idempotent. */
  close(): Promise<void>;
}

/** Starts a proxy listening on loopback. */
export async function createTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const targetHost = options.targetHost ?? '127.0.0.1';
  let mode: 'forward' | 'blackhole' = 'forward';
  let delayMs = 0;
  let fragments: { bytes: number; intervalMs: number } | undefined;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();

  const pipe = (from: Socket, to: Socket, towardsClient: boolean): void => {
    // Pieces go out in order, one every intervalMs, behind whatever is still queued.
    let queue: Promise<void> = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (mode === 'blackhole') return;
      const f = towardsClient ? fragments : undefined;
      if (f) {
        for (let at = 0; at < chunk.length; at += f.bytes) {
          const piece = chunk.subarray(at, at + f.bytes);
          queue = queue.then(() => new Promise<void>((resolve) => setTimeout(() => {
            if (!to.destroyed) to.write(piece);
            resolve();
          }, f.intervalMs)));
        }
        return;
      }
      if (delayMs > 0) setTimeout(() => { if (!to.destroyed) to.write(chunk); }, delayMs);
      else if (!to.destroyed) to.write(chunk);
    });
  };

  const server: Server = createServer((client) => {
    const upstream = new Socket();
    const pair = { client, upstream };
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    upstream.connect(options.targetPort, targetHost);
    pipe(client, upstream, false);
    pipe(upstream, client, true);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listenPort ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let closed: Promise<void> | undefined;

  return {
    connectString: `127.0.0.1:${port}`,
    port,
    blackhole() {
      mode = 'blackhole';
    },
    forward() {
      mode = 'forward';
    },
    setDelay(ms) {
      delayMs = ms;
    },
    setFragments(next) {
      fragments = next;
    },
    reset() {
      for (const { client, upstream } of [...pairs]) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    get connections() {
      return pairs.size;
    },
    close() {
      if (!closed) {
        closed = new Promise<void>((resolve) => {
          for (const { client, upstream } of [...pairs]) {
            client.destroy();
            upstream.destroy();
          }
          pairs.clear();
          server.close(() => resolve());
        });
      }
      return closed;
    },
  };
}
