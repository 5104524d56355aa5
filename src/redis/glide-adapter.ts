/**
 * The adapter for Valkey GLIDE (`@valkey/valkey-glide` 2.x): `GlideClient` (standalone) and
 * `GlideClusterClient`. Scripts run as GLIDE `Script` objects (EVALSHA, loaded on NOSCRIPT by GLIDE
 * itself), released when the adapter closes. Loss is found by renewal: GLIDE offers no connection
 * latchkey could track keys on.
 */
import { RedisUnavailableError } from '../errors.js';
import { clusterSlot } from './cluster-slot.js';
import type { ChannelListener, LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';
import { OwnSubscriber } from './own-subscriber.js';
import { RespSubscriber } from './resp-subscriber.js';
import { classifyClientError, classifyRefusal, WAIT_REFUSED, type IsReplyError } from './script-sender.js';
import { glideSubscriber, type GlideClusterLike, type GlideConfig } from './glide-subscriber.js';
import { SlotPrimaries } from './slot-primaries.js';

/** A GLIDE `Script` (native): registered in GLIDE's script container until released. */
export interface GlideScript {
  getHash(): string;
  release(): void;
}

/** The part of a GLIDE client latchkey uses (typed here so GLIDE is never imported statically). */
export interface GlideLike {
  invokeScript(script: never, options?: { keys?: string[]; args?: string[] }): Promise<unknown>;
  customCommand(args: string[], options?: never): Promise<unknown>;
  close(errorMessage?: string): void;
}

export function isGlide(value: unknown): value is GlideLike {
  const candidate = value as Partial<GlideLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.invokeScript === 'function' &&
    typeof candidate.customCommand === 'function'
  );
}

/**
 * GLIDE reports Redis' own replies as `RequestError` (its timeouts and lost connections are
 * subclasses with names of their own); a reply starts with Redis' error code (`WRONGTYPE: ...`).
 */
const isGlideReply: IsReplyError = (error) => error.name === 'RequestError' && /^[A-Z][A-Z_]+\b/.test(error.message);

type ScriptClass = new (code: string) => GlideScript;

/** GLIDE's `Script` class, loaded from the package the application installed (a peer dependency). */
async function loadScriptClass(): Promise<ScriptClass> {
  const glide = (await import('@valkey/valkey-glide')) as { Script?: ScriptClass; default?: { Script?: ScriptClass } };
  const Script = glide.Script ?? glide.default?.Script;
  if (!Script) throw new TypeError('@valkey/valkey-glide exports no Script class');
  return Script;
}

export class GlideConnection implements RedisConnection {
  readonly #cluster: boolean;
  readonly #scripts = new Map<string, GlideScript>();
  #scriptClass: Promise<ScriptClass> | undefined;
  readonly #subscriber: OwnSubscriber;
  readonly #primaries: SlotPrimaries;

  constructor(private readonly client: GlideLike) {
    const config = (client as { config?: GlideConfig }).config;
    if (!config?.addresses?.length) {
      throw new TypeError(
        'Expected `redis`, a Valkey GLIDE client, to keep the configuration it was created with (its addresses): ' +
          'latchkey opens its pub/sub connection with it. Create it with GlideClient.createClient(config) or GlideClusterClient.createClient(config).',
      );
    }
    // Only the Cluster client has sharded pub/sub.
    this.#cluster = typeof (client as Partial<GlideClusterLike>).ssubscribe === 'function';
    this.#primaries = new SlotPrimaries(this.#cluster ? client : undefined);
    const address = config.addresses[0]!;
    this.#subscriber = new OwnSubscriber((reconnected) =>
      this.#cluster
        ? glideSubscriber(client as unknown as GlideClusterLike, config)
        : new RespSubscriber(
            {
              host: address.host,
              port: address.port ?? 6379,
              tls: config.useTLS ? tlsOptions(config) : undefined,
              username: config.credentials?.username,
              password: config.credentials?.password,
            },
            reconnected,
          ),
    );
  }

  async evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    try {
      const glideScript = this.#scripts.get(script.sha) ?? (await this.#register(script));
      const reply = await this.client.invokeScript(glideScript as never, { keys: [...keys], args: args.map(String) });
      return reply as ScriptReply;
    } catch (error) {
      throw classifyClientError(error, `script ${script.name}`, isGlideReply);
    }
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return this.#subscriber.subscribe(channel, listener);
  }

  /** A GlideClusterClient: its slots may move, so scripts go in their Cluster form. */
  get cluster(): boolean {
    return this.#cluster;
  }

  batchGroup(key: string): string {
    if (!this.#cluster) return '';
    // The slot's primary, from latchkey's own copy of the slot map (GLIDE keeps its own to itself);
    // a slot not mapped yet is a group of its own. A stale map costs a call, never a renewal: a key
    // whose slot moved is renewed alone.
    const slot = clusterSlot(key);
    return this.#primaries.get(slot) ?? `slot ${slot}`;
  }

  async waitForReplicas(key: string, replicas: number, timeout: number): Promise<number> {
    // GLIDE multiplexes one connection per node: WAIT routed to the slot's primary covers the
    // scripts sent there before it.
    const route = this.#cluster ? { route: { type: 'primarySlotKey', key } } : undefined;
    try {
      return Number(await this.client.customCommand(['WAIT', String(replicas), String(timeout)], route as never));
    } catch (error) {
      throw classifyRefusal(error, 'WAIT', WAIT_REFUSED, isGlideReply);
    }
  }

  async close(): Promise<void> {
    this.#primaries.close();
    for (const script of this.#scripts.values()) script.release();
    this.#scripts.clear();
    await this.#subscriber.close();
  }

  async #register(script: LuaScript): Promise<GlideScript> {
    this.#scriptClass ??= loadScriptClass();
    const Script = await this.#scriptClass.catch((error: unknown) => {
      this.#scriptClass = undefined;
      throw new RedisUnavailableError('Could not load @valkey/valkey-glide for its Script class', { cause: error });
    });
    // Another call may have registered it meanwhile: one Script per source.
    const existing = this.#scripts.get(script.sha);
    if (existing) return existing;
    const glideScript = new Script(script.source);
    this.#scripts.set(script.sha, glideScript);
    return glideScript;
  }
}

/** node:tls options from GLIDE's TLS settings. */
function tlsOptions(config: GlideConfig): { rejectUnauthorized?: boolean; ca?: string | Buffer } {
  const advanced = config.advancedConfiguration?.tlsAdvancedConfiguration;
  return {
    ...(advanced?.insecure ? { rejectUnauthorized: false } : {}),
    ...(advanced?.rootCertificates ? { ca: advanced.rootCertificates } : {}),
  };
}
