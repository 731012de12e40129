// A TCP relay between one client and one server (a node and its PostgreSQL), that a test can cut as a
// network partition does: `pause()` stops every byte in both directions without closing anything (what
// is sent meanwhile is held, new connections are accepted and held too), and `resume()` delivers what
// was held, in order, and goes on. So a query a node sent into the partition reaches the database late,
// after the node has given up on it: exactly what fencing must refuse. `reset()` ends a cut the other
// way: every connection is closed on both sides and what was held is dropped, as when a partition lasts
// long enough for the peers' TCP to give up.

import net from 'node:net';

interface Pair {
  client: net.Socket;
  upstream?: net.Socket;
  toUpstream: Buffer[];
  toClient: Buffer[];
  clientEnded: boolean;
  upstreamEnded: boolean;
  /** Closed by reset(): nothing more is forwarded either way. */
  dropped?: boolean;
}

export class TcpRelay {
  private paused = false;
  private readonly pairs = new Set<Pair>();

  private constructor(private readonly server: net.Server, private readonly target: { host: string; port: number }) {}

  static async start(target: { host: string; port: number }): Promise<TcpRelay> {
    let relay!: TcpRelay;
    const server = net.createServer((client) => relay.accept(client));
    relay = new TcpRelay(server, target);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return relay;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** `url` with its host and port replaced by this relay's. */
  urlFor(url: string): string {
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(this.port);
    return relayed.toString();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const pair of this.pairs) this.flush(pair);
  }

  /** Drops what is held, closes every connection on both sides, and forwards again. */
  reset(): void {
    for (const pair of this.pairs) {
      pair.dropped = true;
      pair.toUpstream.length = 0;
      pair.toClient.length = 0;
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    this.paused = false;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const pair: Pair = { client, toUpstream: [], toClient: [], clientEnded: false, upstreamEnded: false };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      pair.toUpstream.push(chunk);
      this.flush(pair);
    });
    const clientGone = (): void => {
      pair.clientEnded = true;
      this.flush(pair);
    };
    client.on('end', clientGone);
    client.on('close', clientGone);
    client.on('error', () => undefined);
    if (!this.paused) this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('connect', () => this.flush(pair));
    upstream.on('data', (chunk: Buffer) => {
      pair.toClient.push(chunk);
      this.flush(pair);
    });
    const upstreamGone = (): void => {
      pair.upstreamEnded = true;
      this.flush(pair);
    };
    upstream.on('end', upstreamGone);
    upstream.on('close', upstreamGone);
    upstream.on('error', () => undefined);
  }

  /** Delivers what is held, unless paused; passes an end on once everything before it is delivered. */
  private flush(pair: Pair): void {
    if (this.paused || pair.dropped) return;
    if (!pair.upstream) this.connectUpstream(pair);
    const upstream = pair.upstream as net.Socket;
    if (!upstream.connecting && !upstream.destroyed) {
      for (const chunk of pair.toUpstream.splice(0)) upstream.write(chunk);
      if (pair.clientEnded) upstream.end();
    }
    if (!pair.client.destroyed) {
      for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
      if (pair.upstreamEnded) pair.client.end();
    }
    if (pair.clientEnded && pair.upstreamEnded) this.pairs.delete(pair);
  }
}
