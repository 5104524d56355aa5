/**
 * The Redis Cluster hash slot of a key, computed as Redis does: CRC16/XMODEM of the key's UTF-8
 * bytes (of its hash tag, if it has one), mod 16384. An ASCII key is read as it is, without a
 * Buffer: the fence counters' slot table hashes 160,000 short keys when first used.
 */
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
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    // Past ASCII a character is several UTF-8 bytes: only an encoder says which.
    if (code > 0x7f) return crcOfBytes(Buffer.from(key)) % 16384;
    crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ code) & 0xff]!) & 0xffff;
  }
  return crc % 16384;
}

function crcOfBytes(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!) & 0xffff;
  return crc;
}
