/**
 * The Redis Cluster hash slot of a key, computed as Redis does.
 */
/** Redis Cluster hash slot of a key (CRC16/XMODEM of its hash tag, mod 16384). */
const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  TABLE[i] = crc & 0xffff;
}

export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!) & 0xffff;
  return crc % 16384;
}
