/**
 * The EIP-712 digest a payer signs for an EIP-3009 TransferWithAuthorization: keccak256(0x1901 ||
 * domain separator || struct hash). This type and domain shape are fixed, so the encoding is written
 * out (no general typed-data encoder), and each token's domain separator is computed once. The same
 * digest as viem's hashTypedData(transferTypedData(...)) (checked in the runtime tests).
 * Part of your project: edit freely.
 */
import { keccak256, keccak256Text } from "./keccak.js";
import type { ResolvedNetwork } from "../networks.js";
import type { Authorization } from "../x402.js";

const DOMAIN_TYPE_HASH = keccak256Text(
  "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)",
);
const TRANSFER_TYPE_HASH = keccak256Text(
  "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)",
);
const MAX_UINT256 = (1n << 256n) - 1n;

/** Writes a uint256 (decimal string or number) as 32 big-endian bytes; throws if out of range. */
function writeUint256(out: Buffer, offset: number, value: string | number | bigint): void {
  const n = BigInt(value);
  if (n < 0n || n > MAX_UINT256) throw new RangeError(`${String(value)} does not fit in a uint256`);
  out.write(n.toString(16).padStart(64, "0"), offset, 32, "hex");
}

/** Writes an address (0x + 40 hex) left-padded to 32 bytes. */
function writeAddress(out: Buffer, offset: number, address: string): void {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new TypeError(`${address} is not an address`);
  out.fill(0, offset, offset + 12);
  out.write(address.slice(2), offset + 12, 20, "hex");
}

const separators = new Map<string, Uint8Array>();

/** The token's EIP-712 domain separator (name, version, chainId, verifyingContract), cached. */
export function domainSeparator(network: ResolvedNetwork): Uint8Array {
  const key = `${network.assetName}\n${network.assetVersion}\n${network.chainId}\n${network.asset.toLowerCase()}`;
  let separator = separators.get(key);
  if (!separator) {
    const data = Buffer.alloc(160);
    data.set(DOMAIN_TYPE_HASH, 0);
    data.set(keccak256Text(network.assetName), 32);
    data.set(keccak256Text(network.assetVersion), 64);
    writeUint256(data, 96, network.chainId);
    writeAddress(data, 128, network.asset);
    separator = keccak256(data);
    separators.set(key, separator);
  }
  return separator;
}

/** The digest of `auth` under the network's token domain. Throws on a malformed field (not a uint256...). */
export function transferDigest(network: ResolvedNetwork, auth: Authorization): Uint8Array {
  const struct = Buffer.alloc(224);
  struct.set(TRANSFER_TYPE_HASH, 0);
  writeAddress(struct, 32, auth.from);
  writeAddress(struct, 64, auth.to);
  writeUint256(struct, 96, auth.value);
  writeUint256(struct, 128, auth.validAfter);
  writeUint256(struct, 160, auth.validBefore);
  if (!/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) throw new TypeError("nonce is not 32 bytes");
  struct.write(auth.nonce.slice(2), 192, 32, "hex");
  const message = Buffer.alloc(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(domainSeparator(network), 2);
  message.set(keccak256(struct), 34);
  return keccak256(message);
}
