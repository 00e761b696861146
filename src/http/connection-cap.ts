import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Why a connection was closed at the cap: the one that waited longest for headers, the longest idle, or the new one. */
export type ShedReason = 'waiting_headers' | 'idle' | 'refused';

/**
 * Holds the server to `cap` open connections by closing the least useful one
 * when a new one would go over it, rather than refusing the new one (which
 * is what Node's `server.maxConnections` does). A flood of sockets that never
 * finish their headers otherwise fills the cap and every later client,
 * however well-behaved, is reset until the header timeout frees a slot; here
 * each newcomer takes the slot of the socket that has waited longest without
 * completing its first request's headers, then of the keep-alive connection
 * idle the longest. A connection with a request in progress is never closed:
 * when every one has, the newcomer is refused.
 *
 * Sockets are tracked in three states: waiting (connected, first request's
 * headers not complete), active (a request in progress) and idle (kept alive
 * between requests). Maps keep insertion order, so the first entry of
 * `waiting` is the oldest and the first of `idle` the longest idle.
 *
 * The server's 'request' listener added here must stay: whoever swaps the
 * app removes only its own listener (see index.ts).
 */
export function capConnections(server: Server, cap: number, onShed: (reason: ShedReason, remoteAddress: string | undefined) => void): void {
  const waiting = new Map<Socket, true>();
  const idle = new Map<Socket, true>();
  /** Requests in progress per active socket (more than one when a client pipelines). */
  const active = new Map<Socket, number>();
  const open = () => waiting.size + idle.size + active.size;

  server.on('connection', (socket: Socket) => {
    waiting.set(socket, true);
    socket.once('close', () => {
      waiting.delete(socket);
      idle.delete(socket);
      active.delete(socket);
    });
    if (open() <= cap) return;
    const [oldestWaiting] = waiting.keys();
    const [longestIdle] = idle.keys();
    // The newcomer itself is the newest waiting socket: picking it means every other one has a request in progress.
    const victim = oldestWaiting !== socket ? oldestWaiting : (longestIdle ?? socket);
    const reason: ShedReason = victim === socket ? 'refused' : victim === longestIdle ? 'idle' : 'waiting_headers';
    // Read before destroy(), which forgets it.
    const { remoteAddress } = victim;
    waiting.delete(victim);
    idle.delete(victim);
    victim.destroy();
    onShed(reason, remoteAddress);
  });

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    if (socket.destroyed) return;
    waiting.delete(socket);
    idle.delete(socket);
    active.set(socket, (active.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (active.get(socket) ?? 1) - 1;
      if (left > 0) {
        active.set(socket, left);
        return;
      }
      active.delete(socket);
      if (!socket.destroyed) idle.set(socket, true);
    });
  });
}
