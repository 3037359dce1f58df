import { recoverTypedDataAddress, hashTypedData, keccak256, recoverAddress } from "viem/utils";
import { privateKeyToAccount } from "viem/accounts";
import { secp256k1 } from "@noble/curves/secp256k1";
import { keccak_256 } from "@noble/hashes/sha3";
import { randomBytes } from "node:crypto";
const acct = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const TYPES = { TransferWithAuthorization: [
    { name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" } ] };
const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" };
const N = 300;
const items = [];
for (let i = 0; i < N; i++) {
  const message = { from: acct.address, to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value: 10000n, validAfter: 0n, validBefore: 2000000000n, nonce: "0x" + randomBytes(32).toString("hex") };
  const td = { domain, types: TYPES, primaryType: "TransferWithAuthorization", message };
  items.push({ td, signature: await acct.signTypedData(td) });
}
async function bench(name, fn) {
  for (let r = 0; r < 3; r++) {
    const c0 = process.cpuUsage(); const t = performance.now();
    for (const it of items) await fn(it);
    const c = process.cpuUsage(c0); const cpu = (c.user + c.system) / 1000;
    if (r === 2) console.log(name, ((performance.now() - t) / N * 1000).toFixed(0), "us wall", (cpu / N * 1000).toFixed(0), "us cpu");
  }
}
await bench("viem recoverTypedDataAddress", (it) => recoverTypedDataAddress({ ...it.td, signature: it.signature }));
await bench("viem hashTypedData", (it) => hashTypedData(it.td));
const hashes = items.map((it) => hashTypedData(it.td));
let k = 0;
await bench("viem recoverAddress(hash)", (it) => recoverAddress({ hash: hashes[k++ % N], signature: it.signature }));
k = 0;
await bench("noble recoverPublicKey", (it) => { const sig = it.signature.slice(2); const s = secp256k1.Signature.fromCompact(sig.slice(0,128)).addRecoveryBit(parseInt(sig.slice(128),16)-27); return s.recoverPublicKey(hashes[k++ % N].slice(2)).toRawBytes(false); });
await bench("noble keccak 224B", (it) => keccak_256(new Uint8Array(224)));
