/**
 * A passkey-owned smart account on the local node, and the software passkey that owns it: a real P-256
 * key signs real WebAuthn assertions (authenticatorData and clientDataJSON whose challenge is the hash
 * signed), which the account's ERC-1271 `isValidSignature` checks on chain. The account can be deployed,
 * or left undeployed at its CREATE2 address and its signatures wrapped as ERC-6492 with the factory call
 * that would deploy it.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  hashMessage,
  http,
  serializeErc6492Signature,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileFixture } from './solidity.js';

/** Anvil's first well-known development key: funded on every local anvil, worthless anywhere else. */
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const b64url = (b: Buffer) => b.toString('base64url');
const hex32 = (b: Buffer): Hex => `0x${b.toString('hex').padStart(64, '0')}`;

export interface Chain {
  url: string;
  chainId: number;
}

/** The P-256 key of a software passkey, as an authenticator would hold it. */
export class SoftwarePasskey {
  readonly #key: KeyObject;
  readonly x: Hex;
  readonly y: Hex;
  readonly rpId: string;
  readonly origin: string;

  constructor(rpId: string, origin: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.x = hex32(Buffer.from(jwk.x!, 'base64url'));
    this.y = hex32(Buffer.from(jwk.y!, 'base64url'));
    this.rpId = rpId;
    this.origin = origin;
  }

  /** A WebAuthn assertion over `hash`, ABI-encoded as the account's WebAuthnAuth struct. */
  assert(hash: Hex): Hex {
    const authenticatorData = Buffer.concat([
      createHash('sha256').update(this.rpId).digest(),
      Buffer.from([0x05]), // user present + user verified
      Buffer.from([0, 0, 0, 1]),
    ]);
    const clientDataJSON = JSON.stringify({
      type: 'webauthn.get',
      challenge: b64url(Buffer.from(hash.slice(2), 'hex')),
      origin: this.origin,
      crossOrigin: false,
    });
    const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]);
    const sig = sign('sha256', signed, { key: this.#key, dsaEncoding: 'ieee-p1363' });
    const r = BigInt(`0x${sig.subarray(0, 32).toString('hex')}`);
    let s = BigInt(`0x${sig.subarray(32).toString('hex')}`);
    if (s > P256_N / 2n) s = P256_N - s; // the account (like most) accepts only low-s signatures
    return encodeAbiParameters(
      [
        {
          type: 'tuple',
          components: [
            { name: 'authenticatorData', type: 'bytes' },
            { name: 'clientDataJSON', type: 'string' },
            { name: 'challengeIndex', type: 'uint256' },
            { name: 'typeIndex', type: 'uint256' },
            { name: 'r', type: 'bytes32' },
            { name: 's', type: 'bytes32' },
          ],
        },
      ],
      [
        {
          authenticatorData: `0x${authenticatorData.toString('hex')}`,
          clientDataJSON,
          challengeIndex: BigInt(clientDataJSON.indexOf('"challenge":"')),
          typeIndex: BigInt(clientDataJSON.indexOf('"type":"webauthn.get"')),
          r: `0x${r.toString(16).padStart(64, '0')}`,
          s: `0x${s.toString(16).padStart(64, '0')}`,
        },
      ],
    );
  }
}

/** Deploys the account factory on the node; answers a maker of passkey accounts. */
export async function deployFactory(node: Chain) {
  const chain = defineChain({
    id: node.chainId,
    name: 'local',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.url] } },
  });
  const transport = http(node.url);
  const pub = createPublicClient({ chain, transport });
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(DEPLOYER_KEY) });
  const { PasskeyAccount, PasskeyAccountFactory } = compileFixture('PasskeyAccount.sol');
  const hash = await wallet.deployContract({ abi: PasskeyAccountFactory!.abi, bytecode: PasskeyAccountFactory!.bytecode });
  const factory = (await pub.waitForTransactionReceipt({ hash })).contractAddress!;

  return {
    factory,
    /** A new passkey and the address its account has (deployed or not) at the factory's CREATE2 slot. */
    account(passkey: SoftwarePasskey) {
      const bytecode = encodeDeployData({ abi: PasskeyAccount!.abi, bytecode: PasskeyAccount!.bytecode, args: [passkey.x, passkey.y] });
      const address: Address = getContractAddress({ opcode: 'CREATE2', from: factory, salt: `0x${'00'.repeat(32)}`, bytecode });
      const factoryData = encodeFunctionData({ abi: PasskeyAccountFactory!.abi, functionName: 'deploy', args: [passkey.x, passkey.y] });
      return {
        address,
        async deploy(): Promise<void> {
          const tx = await wallet.sendTransaction({ to: factory, data: factoryData });
          await pub.waitForTransactionReceipt({ hash: tx });
        },
        /** The account's ERC-1271 signature of an EIP-191 message (what SIWE signs). */
        signMessage(message: string): Hex {
          return passkey.assert(hashMessage(message));
        },
        /** The same, wrapped as ERC-6492 with the call that deploys the account, for an undeployed account. */
        signMessageUndeployed(message: string): Hex {
          return serializeErc6492Signature({ address: factory, data: factoryData, signature: passkey.assert(hashMessage(message)) });
        },
      };
    },
  };
}
