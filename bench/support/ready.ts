/** The first message of a server worker: it listens on `port` (127.0.0.1). */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
}
