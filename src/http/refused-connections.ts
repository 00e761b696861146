/**
 * Connections refused because the server held HTTP_MAX_CONNECTIONS, since
 * the process started: a counter for the metrics endpoint to export.
 */
let refused = 0;

export function countRefusedConnection(): void {
  refused += 1;
}

export function refusedConnections(): number {
  return refused;
}
