// The part of Bun's `bun` module these tests use (Bun's own types are not installed: they declare
// Bun's globals over Node's).
declare module 'bun' {
  export class RedisClient {
    constructor(url?: string);
    readonly connected: boolean;
    connect(): Promise<void>;
    send(command: string, args: string[]): Promise<unknown>;
    close(): void;
  }
}
