import type { KV } from '@nats-io/kv';
import type { NatsClients, NatsLink } from './nats-link.js';

/**
 * A key-value bucket on the link's current connection: opened (created when missing) at first use,
 * opened again once a reconnect replaced the connection, and again after a failed open.
 */
export class BucketOnLink {
  private opened: { readonly clients: NatsClients; readonly kv: Promise<KV> } | undefined;

  constructor(
    private readonly link: NatsLink,
    private readonly open: (clients: NatsClients) => Promise<KV>,
  ) {}

  get(): Promise<KV> {
    const clients = this.link.clients();
    if (this.opened?.clients !== clients) {
      const kv = this.open(clients);
      this.opened = { clients, kv };
      kv.catch(() => {
        if (this.opened?.kv === kv) this.opened = undefined;
      });
    }
    return this.opened.kv;
  }
}
