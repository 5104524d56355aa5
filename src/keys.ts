/**
 * Key and channel names. Every key of one primitive carries the same `{hash tag}` (the primitive's
 * kind and name), so all its scripts run on Redis Cluster, while different names spread over slots.
 */
export interface PrimitiveKeys {
  /** The `{tag}` shared by all keys of this primitive. */
  readonly tag: string;
  /** A key of this primitive: `<prefix>{<name>}:<suffix>`. */
  key(suffix: string): string;
  /** The pub/sub channel its waiters listen on. */
  readonly channel: string;
}

export function primitiveKeys(prefix: string, name: string): PrimitiveKeys {
  const tag = `${prefix}{${name}}`;
  return {
    tag,
    key: (suffix) => `${tag}:${suffix}`,
    channel: `${tag}:released`,
  };
}
