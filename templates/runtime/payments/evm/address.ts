/**
 * Ethereum addresses and their EIP-55 checksums (mixed case encodes a keccak-256 checksum), with the
 * semantics of viem's isAddress / getAddress, without loading viem (configuration is read at start-up,
 * in dev mode too). Part of your project: edit freely.
 */
import { keccak256Text } from "./keccak.js";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Mixed-case spellings already found to carry a valid checksum (payers pay again and again). */
const checked = new Set<string>();
const MAX_CHECKED = 1024;

/** The EIP-55 checksummed spelling of a well-formed address (0x and 40 hex digits, any case). */
export function checksumAddress(address: string): `0x${string}` {
  const hex = address.slice(2).toLowerCase();
  const hash = keccak256Text(hex);
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  return out as `0x${string}`;
}

/**
 * True for 0x and 40 hex digits; unless `strict` is false, a spelling that is not all lowercase
 * must carry a valid EIP-55 checksum (as viem's isAddress).
 */
export function isAddress(
  text: string,
  { strict = true }: { strict?: boolean } = {},
): text is `0x${string}` {
  if (!ADDRESS.test(text)) return false;
  if (!strict || text.toLowerCase() === text || checked.has(text)) return true;
  if (checksumAddress(text) !== text) return false;
  if (checked.size >= MAX_CHECKED) checked.clear();
  checked.add(text);
  return true;
}
